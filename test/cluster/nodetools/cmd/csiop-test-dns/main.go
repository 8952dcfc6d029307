// Command csiop-test-dns is a TEST STAND-IN for cluster DNS (CoreDNS cannot be
// built on the machines this project tests on). It watches Services with
// client-go and answers, over UDP and TCP:
//
//   - A queries for <svc>.<ns>.svc.<domain> and <svc>.<ns>.svc with the
//     Service's IPv4 ClusterIP(s), AAAA with its IPv6 ones;
//   - other types for those names, and the zone's inner names (<domain>,
//     svc.<domain>, <ns>.svc.<domain>): an empty NOERROR answer;
//   - any other name in the zone (headless, ExternalName and unknown
//     Services, pod records...): NXDOMAIN;
//   - every name outside the zone: REFUSED. Nothing is forwarded; no query
//     leaves this machine.
//
// Pods reach it at the cluster DNS address (10.96.0.10:53) through a DNAT
// rule that test/cluster/up installs; it listens on loopback only.
//
//	csiop-test-dns --listen 127.0.0.1:PORT --kubeconfig FILE [--domain cluster.local]
//	csiop-test-dns --query NAME --server 127.0.0.1:PORT [--tcp]   (one lookup: prints the answer)
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	var (
		listen, kubeconfig, domain, query, server string
		useTCP, quiet                             bool
		ttl                                       uint
	)
	flag.StringVar(&listen, "listen", "127.0.0.1:5353", "UDP and TCP address to serve on")
	flag.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster whose Services to serve")
	flag.StringVar(&domain, "domain", "cluster.local", "cluster domain")
	flag.UintVar(&ttl, "ttl", 5, "TTL of the answers, seconds")
	flag.BoolVar(&quiet, "quiet", false, "do not log every query")
	flag.StringVar(&query, "query", "", "client mode: look NAME up (type A) at --server and print the answer")
	flag.StringVar(&server, "server", "", "client mode: the server to ask")
	flag.BoolVar(&useTCP, "tcp", false, "client mode: ask over TCP")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("csiop-test-dns: ")
	if query != "" {
		os.Exit(clientQuery(query, server, useTCP))
	}
	if kubeconfig == "" {
		log.Fatal("--kubeconfig is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	cfg.UserAgent = "csiop-test-dns"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	factory := informers.NewSharedInformerFactory(cs, 0)
	svcInformer := factory.Core().V1().Services()
	lister := svcInformer.Lister()
	svcInformer.Informer() // register before Start
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	ok := cache.WaitForCacheSync(syncCtx.Done(), svcInformer.Informer().HasSynced)
	cancel()
	if !ok {
		log.Fatal("Service cache did not sync within 60s")
	}
	n, _ := lister.List(labels.Everything())
	log.Printf("watching Services (%d now)", len(n))

	r := &resolver{services: lister, zone: dnsmessage.MustNewName(strings.Trim(domain, ".") + "."), ttl: uint32(ttl), quiet: quiet}
	r.domain = strings.ToLower(r.zone.String())

	pc, err := net.ListenPacket("udp", listen)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		log.Fatal(err)
	}
	go r.serveUDP(pc)
	go r.serveTCP(ln)
	log.Printf("serving on %s (udp+tcp), zone %s", listen, r.domain)
	<-ctx.Done()
	log.Print("shutting down")
	pc.Close()
	ln.Close()
	factory.Shutdown()
}

type resolver struct {
	services listersv1.ServiceLister
	zone     dnsmessage.Name
	domain   string // "cluster.local."
	ttl      uint32
	quiet    bool
}

func (r *resolver) serveUDP(pc net.PacketConn) {
	buf := make([]byte, 65535)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.Printf("udp read: %v", err)
			continue
		}
		resp := r.handle(buf[:n], 512)
		if resp != nil {
			if _, err := pc.WriteTo(resp, addr); err != nil {
				log.Printf("udp write to %s: %v", addr, err)
			}
		}
	}
}

func (r *resolver) serveTCP(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.Printf("tcp accept: %v", err)
			continue
		}
		go func() {
			defer c.Close()
			for {
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				var l [2]byte
				if _, err := io.ReadFull(c, l[:]); err != nil {
					return
				}
				msg := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(c, msg); err != nil {
					return
				}
				resp := r.handle(msg, 65535)
				if resp == nil {
					return
				}
				out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
				if _, err := c.Write(append(out, resp...)); err != nil {
					return
				}
			}
		}()
	}
}

// handle answers one DNS message; nil means drop it (unparseable header).
func (r *resolver) handle(msg []byte, limit int) []byte {
	var p dnsmessage.Parser
	hdr, err := p.Start(msg)
	if err != nil {
		return nil
	}
	if hdr.Response {
		return nil
	}
	resp := dnsmessage.Header{ID: hdr.ID, Response: true, OpCode: hdr.OpCode, RecursionDesired: hdr.RecursionDesired}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 {
		resp.RCode = dnsmessage.RCodeFormatError
		return build(resp, nil, nil, limit)
	}
	q := qs[0]
	if hdr.OpCode != 0 {
		resp.RCode = dnsmessage.RCodeNotImplemented
		return build(resp, []dnsmessage.Question{q}, nil, limit)
	}
	rcode, answers := r.lookup(q)
	resp.RCode = rcode
	resp.Authoritative = rcode != dnsmessage.RCodeRefused
	if !r.quiet {
		var ips []string
		for _, a := range answers {
			switch b := a.Body.(type) {
			case *dnsmessage.AResource:
				ips = append(ips, netip.AddrFrom4(b.A).String())
			case *dnsmessage.AAAAResource:
				ips = append(ips, netip.AddrFrom16(b.AAAA).String())
			}
		}
		log.Printf("%s %s -> %s %v", strings.TrimPrefix(q.Type.String(), "Type"), q.Name,
			strings.TrimPrefix(rcode.String(), "RCode"), ips)
	}
	return build(resp, []dnsmessage.Question{q}, answers, limit)
}

// lookup maps a question to an rcode and answers.
func (r *resolver) lookup(q dnsmessage.Question) (dnsmessage.RCode, []dnsmessage.Resource) {
	if q.Class != dnsmessage.ClassINET && q.Class != dnsmessage.ClassANY {
		return dnsmessage.RCodeRefused, nil
	}
	name := strings.ToLower(q.Name.String())
	var rel string // name relative to the zone, without trailing dot
	switch {
	case name == r.domain:
		return dnsmessage.RCodeSuccess, nil
	case strings.HasSuffix(name, "."+r.domain):
		rel = strings.TrimSuffix(name, "."+r.domain)
	case name == "svc." || strings.HasSuffix(name, ".svc."):
		rel = strings.TrimSuffix(name, ".") // <svc>.<ns>.svc without the domain
	default:
		return dnsmessage.RCodeRefused, nil
	}
	parts := strings.Split(rel, ".")
	switch {
	case len(parts) == 1 && parts[0] == "svc":
		return dnsmessage.RCodeSuccess, nil // svc.<domain>
	case len(parts) == 2 && parts[1] == "svc":
		return dnsmessage.RCodeSuccess, nil // <ns>.svc.<domain>: exists if any Service does; keep it simple
	case len(parts) == 3 && parts[2] == "svc":
	default:
		return dnsmessage.RCodeNameError, nil
	}
	svc, err := r.services.Services(parts[1]).Get(parts[0])
	if err != nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return dnsmessage.RCodeNameError, nil
	}
	var answers []dnsmessage.Resource
	for _, s := range svc.Spec.ClusterIPs {
		ip, err := netip.ParseAddr(s)
		if err != nil { // "None": headless
			continue
		}
		h := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: r.ttl}
		switch {
		case ip.Is4() && (q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeALL):
			h.Type = dnsmessage.TypeA
			answers = append(answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AResource{A: ip.As4()}})
		case ip.Is6() && (q.Type == dnsmessage.TypeAAAA || q.Type == dnsmessage.TypeALL):
			h.Type = dnsmessage.TypeAAAA
			answers = append(answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AAAAResource{AAAA: ip.As16()}})
		}
	}
	if len(answers) == 0 && svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return dnsmessage.RCodeNameError, nil // headless: no records served by this stand-in
	}
	return dnsmessage.RCodeSuccess, answers
}

func build(h dnsmessage.Header, qs []dnsmessage.Question, answers []dnsmessage.Resource, limit int) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	_ = b.StartQuestions()
	for _, q := range qs {
		_ = b.Question(q)
	}
	_ = b.StartAnswers()
	for _, a := range answers {
		switch body := a.Body.(type) {
		case *dnsmessage.AResource:
			_ = b.AResource(a.Header, *body)
		case *dnsmessage.AAAAResource:
			_ = b.AAAAResource(a.Header, *body)
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	if len(out) > limit { // never happens with a handful of ClusterIPs; truncate to the header
		h.Truncated = true
		return build(h, qs, nil, 1<<16)
	}
	return out
}

// clientQuery sends one A query and prints the rcode and addresses; exit 0 if
// the answer holds at least one address.
func clientQuery(qname, server string, useTCP bool) int {
	if server == "" {
		fmt.Fprintln(os.Stderr, "--server is required with --query")
		return 2
	}
	if !strings.HasSuffix(qname, ".") {
		qname += "."
	}
	n, err := dnsmessage.NewName(qname)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: uint16(os.Getpid()), RecursionDesired: true})
	_ = b.StartQuestions()
	_ = b.Question(dnsmessage.Question{Name: n, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	msg, _ := b.Finish()
	network := "udp"
	if useTCP {
		network = "tcp"
	}
	c, err := net.DialTimeout(network, server, 3*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	resp := make([]byte, 65535)
	var rn int
	if useTCP {
		if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		rn, err = io.ReadFull(c, resp[:binary.BigEndian.Uint16(l[:])])
	} else {
		if _, err = c.Write(msg); err == nil {
			rn, err = c.Read(resp)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var p dnsmessage.Parser
	h, err := p.Start(resp[:rn])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = p.SkipAllQuestions()
	var ips []string
	for {
		ah, err := p.AnswerHeader()
		if err != nil {
			break
		}
		if ah.Type == dnsmessage.TypeA {
			a, err := p.AResource()
			if err != nil {
				break
			}
			ips = append(ips, netip.AddrFrom4(a.A).String())
		} else if err := p.SkipAnswer(); err != nil {
			break
		}
	}
	fmt.Printf("%s %s %s\n", qname, strings.TrimPrefix(h.RCode.String(), "RCode"), strings.Join(ips, ","))
	if len(ips) == 0 {
		return 1
	}
	return 0
}
