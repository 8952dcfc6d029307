package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"sync"

	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// supportedVersions are the CSI versions announced to the kubelet.
var supportedVersions = []string{"1.0.0"}

// registrar serves the kubelet's Registration service for one CSI driver and remembers
// what the kubelet last reported.
type registrar struct {
	registration.UnimplementedRegistrationServer
	driverName string
	endpoint   string // the driver's socket, as the kubelet sees it
	socket     string // the registration socket this registrar listens on
	onFailure  func(error)

	mu         sync.Mutex
	registered bool
	lastError  string
}

func (r *registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	log.Printf("kubelet asked for plugin info: driver %q at %s", r.driverName, r.endpoint)
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              r.driverName,
		Endpoint:          r.endpoint,
		SupportedVersions: supportedVersions,
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, st *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	r.mu.Lock()
	r.registered, r.lastError = st.GetPluginRegistered(), st.GetError()
	r.mu.Unlock()
	if st.GetPluginRegistered() {
		log.Printf("kubelet registered driver %q", r.driverName)
	} else {
		log.Printf("kubelet registration of driver %q FAILED: %s", r.driverName, st.GetError())
		r.onFailure(errors.New(st.GetError()))
	}
	return &registration.RegistrationStatusResponse{}, nil
}

// healthz answers 200 once the registration socket exists and the kubelet has reported a
// successful registration, else 500 with the reason.
func (r *registrar) healthz(w http.ResponseWriter, _ *http.Request) {
	if err := r.health(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "ok")
}

func (r *registrar) health() error {
	fi, err := os.Stat(r.socket)
	if err != nil {
		return fmt.Errorf("registration socket: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("registration socket %s is not a socket", r.socket)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.registered:
		return nil
	case r.lastError != "":
		return fmt.Errorf("the kubelet failed to register driver %q: %s", r.driverName, r.lastError)
	}
	return fmt.Errorf("the kubelet has not yet reported a successful registration of driver %q", r.driverName)
}
