// Tiny validating admission webhook used by test/cluster/selftest to prove the
// apiserver can call a URL-based webhook on 127.0.0.1. Standard library only.
module csi-operator/test/cluster/selftest-webhook

go 1.26.0
