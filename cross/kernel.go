package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kernelMeta is the Debian package that always depends on the current
// arm64 cloud kernel: an Image with 48-bit virtual addresses (which
// ThreadSanitizer needs), the PL011 serial console and initramfs support
// built in, so the VM needs no modules.
const kernelMeta = "linux-image-cloud-arm64:arm64"

// fetchKernel returns the path of the arm64 kernel Image, downloading the
// package the meta-package depends on by name with apt-get (never from a
// URL) and keeping its Image in cache, keyed by the package name.
func fetchKernel(cache string) (string, error) {
	tmp, err := os.MkdirTemp("", "cellrate-kernel-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	meta, err := aptDownload(tmp, kernelMeta)
	if err != nil {
		return cachedKernel(cache, err)
	}
	deps, err := exec.Command("dpkg-deb", "-f", meta, "Depends").Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-deb -f %s Depends: %v", meta, err)
	}
	name := strings.FieldsFunc(string(deps), func(r rune) bool { return r == ' ' || r == ',' || r == '\n' })[0]
	image := filepath.Join(cache, name, "Image")
	if _, err := os.Stat(image); err == nil {
		return image, nil
	}
	deb, err := aptDownload(tmp, name+":arm64")
	if err != nil {
		return "", err
	}
	root := filepath.Join(tmp, "root")
	if out, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb -x %s: %v\n%s", deb, err, out)
	}
	found, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(found) != 1 {
		return "", fmt.Errorf("%s: want one boot/vmlinuz-*, found %v", deb, found)
	}
	if err := os.MkdirAll(filepath.Dir(image), 0o755); err != nil {
		return "", err
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		return "", err
	}
	return image, os.WriteFile(image, b, 0o644)
}

// aptDownload downloads the .deb of pkg into dir and returns its path.
func aptDownload(dir, pkg string) (string, error) {
	// The sandbox user cannot write to a private temporary directory.
	cmd := exec.Command("apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get download %s: %v\n%s", pkg, err, out)
	}
	name, _, _ := strings.Cut(pkg, ":")
	found, _ := filepath.Glob(filepath.Join(dir, name+"_*.deb"))
	if len(found) != 1 {
		return "", fmt.Errorf("apt-get download %s: want one %s_*.deb, found %v", pkg, name, found)
	}
	return found[0], nil
}

// cachedKernel falls back to a kernel downloaded before, when apt cannot
// download (no network); otherwise it returns why.
func cachedKernel(cache string, why error) (string, error) {
	found, _ := filepath.Glob(filepath.Join(cache, "*", "Image"))
	if len(found) == 0 {
		return "", fmt.Errorf("%v\nno arm64 kernel cached in %s either; as root run:\n"+
			"  dpkg --add-architecture arm64 && apt-get update", why, cache)
	}
	fmt.Fprintf(os.Stderr, "cross: %v\ncross: using the cached kernel %s\n", why, found[len(found)-1])
	return found[len(found)-1], nil
}
