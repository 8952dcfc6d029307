// Command e2e-images prints, as NAME=REFERENCE lines, the image references that e2e.test (of the
// same k8s.io/kubernetes module) gives the test images its storage tests run, so that
// `test/cluster/images --e2e` builds its stand-ins under exactly those references. It reads them
// from k8s.io/kubernetes/test/utils/image as e2e.test does (with no KUBE_TEST_REPO_LIST
// override: the environment variable is refused).
package main

import (
	"fmt"
	"os"

	imageutils "k8s.io/kubernetes/test/utils/image"
)

func main() {
	if os.Getenv("KUBE_TEST_REPO_LIST") != "" {
		fmt.Fprintln(os.Stderr, "e2e-images: KUBE_TEST_REPO_LIST is set; unset it to print e2e.test's own references")
		os.Exit(2)
	}
	for _, i := range []struct {
		name string
		id   imageutils.ImageID
	}{
		{"busybox", imageutils.BusyBox},
		{"agnhost", imageutils.Agnhost},
		{"nginx", imageutils.Nginx},
		{"glibc-dns-testing", imageutils.GlibcDnsTesting},
	} {
		fmt.Printf("%s=%s\n", i.name, imageutils.GetE2EImage(i.id))
	}
}
