// Command nfacct-cleanup deletes netfilter accounting objects (nfacct) by
// name. kube-proxy's iptables rules count packets in nfacct objects (e.g.
// ct_state_invalid_dropped_pkts) that it creates and never deletes, and
// `kube-proxy --cleanup` leaves them; test/cluster/down removes them with this
// tool once the iptables rules using them are gone. Debian's nfacct package
// would do, but is not installed by default.
//
//	nfacct-cleanup --list           prints the objects
//	nfacct-cleanup NAME...          deletes those that exist (busy ones: an error)
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	nfnlSubsysAcct = 7
	msgAcctGet     = 1
	msgAcctDel     = 3 // after NEW, GET, GET_CTRZERO
	attrName       = 1
)

func main() {
	list := flag.Bool("list", false, "list the nfacct objects")
	flag.Parse()
	if *list {
		names, err := listNames()
		if err != nil {
			fmt.Fprintf(os.Stderr, "nfacct-cleanup: %v\n", err)
			os.Exit(1)
		}
		for _, n := range names {
			fmt.Println(n)
		}
		return
	}
	failed := false
	for _, name := range flag.Args() {
		err := request(msgAcctDel, unix.NLM_F_ACK, name, nil)
		switch {
		case err == nil:
			fmt.Fprintf(os.Stderr, "nfacct-cleanup: deleted %s\n", name)
		case errors.Is(err, syscall.ENOENT):
		default:
			fmt.Fprintf(os.Stderr, "nfacct-cleanup: delete %s: %v\n", name, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func listNames() ([]string, error) {
	var names []string
	err := request(msgAcctGet, unix.NLM_F_DUMP, "", func(attrs []byte) {
		for len(attrs) >= 4 {
			l := int(binary.NativeEndian.Uint16(attrs[0:2]))
			t := binary.NativeEndian.Uint16(attrs[2:4]) & 0x3fff
			if l < 4 || l > len(attrs) {
				return
			}
			if t == attrName {
				v := attrs[4:l]
				for len(v) > 0 && v[len(v)-1] == 0 {
					v = v[:len(v)-1]
				}
				names = append(names, string(v))
			}
			attrs = attrs[(l+3)&^3:]
		}
	})
	return names, err
}

// request sends one nfnetlink accounting message and reads replies until
// DONE/ACK; onMsg gets each reply's attributes.
func request(msgType uint16, flags uint16, name string, onMsg func([]byte)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	var payload []byte
	payload = append(payload, unix.AF_UNSPEC, 0 /* NFNETLINK_V0 */, 0, 0)
	if name != "" {
		v := append([]byte(name), 0)
		attr := make([]byte, 4, 4+len(v)+3)
		binary.NativeEndian.PutUint16(attr[0:2], uint16(4+len(v)))
		binary.NativeEndian.PutUint16(attr[2:4], attrName)
		attr = append(attr, v...)
		for len(attr)%4 != 0 {
			attr = append(attr, 0)
		}
		payload = append(payload, attr...)
	}
	msg := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload))
	binary.NativeEndian.PutUint32(msg[0:4], uint32(unix.NLMSG_HDRLEN+len(payload)))
	binary.NativeEndian.PutUint16(msg[4:6], nfnlSubsysAcct<<8|msgType)
	binary.NativeEndian.PutUint16(msg[6:8], unix.NLM_F_REQUEST|flags)
	binary.NativeEndian.PutUint32(msg[8:12], 1)
	msg = append(msg, payload...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return errors.New("short netlink error")
				}
				if errno := -int32(binary.NativeEndian.Uint32(m.Data[0:4])); errno != 0 {
					return syscall.Errno(errno)
				}
				return nil // ACK
			default:
				if onMsg != nil && len(m.Data) >= 4 {
					onMsg(m.Data[4:]) // skip nfgenmsg
				}
			}
		}
	}
}
