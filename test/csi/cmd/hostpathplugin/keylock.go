package main

import "sync"

// keyLock serializes operations per key (a volume ID or name) without growing forever.
type keyLock struct {
	mu    sync.Mutex
	locks map[string]*refMutex
}

type refMutex struct {
	sync.Mutex
	refs int
}

func newKeyLock() *keyLock {
	return &keyLock{locks: map[string]*refMutex{}}
}

// lock blocks until key is free and returns the function that frees it.
func (k *keyLock) lock(key string) (unlock func()) {
	k.mu.Lock()
	m := k.locks[key]
	if m == nil {
		m = &refMutex{}
		k.locks[key] = m
	}
	m.refs++
	k.mu.Unlock()

	m.Lock()
	return func() {
		m.Unlock()
		k.mu.Lock()
		m.refs--
		if m.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
