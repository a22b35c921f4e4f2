package main

import (
	"debug/elf"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// An initramfs is the file tree the VM boots into, collected from host files
// before it is written as a cpio archive.
type initramfs struct {
	dirs  map[string]bool
	files map[string]ramFile // by guest path
}

type ramFile struct {
	perm uint32
	src  string // host file, or
	data []byte // contents
}

func newInitramfs() *initramfs {
	return &initramfs{dirs: map[string]bool{"/dev": true}, files: map[string]ramFile{}}
}

func (t *initramfs) mkdirAll(dir string) {
	for ; dir != "/" && dir != "."; dir = path.Dir(dir) {
		t.dirs[dir] = true
	}
}

// addFile adds the host file src at the guest path name.
func (t *initramfs) addFile(name string, perm uint32, src string) {
	t.mkdirAll(path.Dir(name))
	t.files[name] = ramFile{perm: perm, src: src}
}

// addData adds a guest file holding b.
func (t *initramfs) addData(name string, b []byte) {
	t.mkdirAll(path.Dir(name))
	t.files[name] = ramFile{perm: 0o644, data: b}
}

// addTree copies the host directory src to the guest directory name.
func (t *initramfs) addTree(name, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		guest := path.Join(name, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			t.mkdirAll(guest)
		case d.Type().IsRegular():
			t.addFile(guest, 0o644, p)
		}
		return nil
	})
}

// addLibs adds the dynamic loader and the shared libraries the ELF binary
// bin needs, taken from the cross sysroot's lib directory: the loader at
// the path the binary names, the libraries in /lib (the guest's
// LD_LIBRARY_PATH).
func (t *initramfs) addLibs(bin, sysrootLib string) error {
	interp, needed, err := elfDeps(bin)
	if err != nil {
		return err
	}
	if interp != "" {
		t.addFile(interp, 0o755, filepath.Join(sysrootLib, path.Base(interp)))
	}
	for _, lib := range needed {
		name := "/lib/" + lib
		if _, ok := t.files[name]; ok {
			continue
		}
		src := filepath.Join(sysrootLib, lib)
		t.addFile(name, 0o755, src)
		if err := t.addLibs(src, sysrootLib); err != nil {
			return err
		}
	}
	return nil
}

// elfDeps returns the program interpreter and the DT_NEEDED libraries of
// the ELF file bin; a static binary has neither.
func elfDeps(bin string) (interp string, needed []string, err error) {
	f, err := elf.Open(bin)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", nil, fmt.Errorf("%s: PT_INTERP: %v", bin, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	needed, err = f.ImportedLibraries()
	return interp, needed, err
}

// write writes the tree as a newc cpio archive: directories first, parents
// before children, then /dev/console (the kernel opens it for init's
// standard streams before devtmpfs is mounted), then the files.
func (t *initramfs) write(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	c := newCPIOWriter(f)
	for _, d := range slices.Sorted(maps.Keys(t.dirs)) {
		c.Dir(d)
	}
	c.CharDev("/dev/console", 5, 1)
	for _, name := range slices.Sorted(maps.Keys(t.files)) {
		rf := t.files[name]
		if rf.src != "" {
			c.File(name, rf.perm, rf.src)
		} else {
			c.Data(name, rf.perm, rf.data)
		}
	}
	if err := c.Close(); err != nil {
		return err
	}
	return f.Close()
}
