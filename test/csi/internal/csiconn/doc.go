// Package csiconn holds the CSI connection code shared by csi-operator's TEST FIXTURE
// stand-ins for the kubernetes-csi driver and sidecars: parsing a CSI endpoint address,
// dialing a driver's unix socket (waiting until it answers), the two Identity calls every
// sidecar makes, and listening on a unix socket. Written from the CSI specification; it is
// not the upstream csi-lib-utils code.
package csiconn
