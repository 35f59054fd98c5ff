package cuda

import (
	"fmt"
	"reflect"
	"strings"
)

// A struct that Go passes a kernel by value is mirrored by a Go struct,
// field for field; the two must agree on every member's offset and size,
// or the kernel reads its arguments from the wrong bytes. The check runs
// at start-up, on the GPU, with whatever compiler the machine has: a probe
// kernel (LayoutProbe), generated from the Go mirror, writes the offset
// and size of each member and the struct's size as the device compiler
// laid them out, and LayoutMismatch compares them with the mirror's.
// (Asserts evaluated at compile time would need the offsets as constants,
// and no one constant form of an offset is accepted by every NVRTC.)

// LayoutProbe returns the CUDA source of a kernel named kernel that
// writes, from one thread, the layout of the C struct cName as the Go
// struct mirror names its members (a field's `c` tag, or its Go name):
// out[2i] and out[2i+1] are the offset and size of the member of field i,
// and out[2n] the size of the struct, for a mirror of n fields
// (LayoutWords). It follows the source that defines cName in one
// translation unit. The offsets are taken from the addresses of a local
// struct's members, which every compiler version evaluates.
func LayoutProbe(kernel, cName string, mirror any) string {
	t := reflect.TypeOf(mirror)
	var b strings.Builder
	fmt.Fprintf(&b, "#line 1 \"layout probe of %s\"\n", cName)
	fmt.Fprintf(&b, "extern \"C\" __global__ void %s(unsigned long long *out)\n{\n", kernel)
	fmt.Fprintf(&b, "    %s s;\n    const char *base = (const char *)&s;\n", cName)
	for i := range t.NumField() {
		m := member(t.Field(i))
		fmt.Fprintf(&b, "    out[%d] = (const char *)&s.%s - base;\n", 2*i, m)
		fmt.Fprintf(&b, "    out[%d] = sizeof(s.%s);\n", 2*i+1, m)
	}
	fmt.Fprintf(&b, "    out[%d] = sizeof(%s);\n}\n", 2*t.NumField(), cName)
	return b.String()
}

// LayoutWords is the number of words the probe of mirror writes.
func LayoutWords(mirror any) int { return 2*reflect.TypeOf(mirror).NumField() + 1 }

// LayoutMismatch returns nil when got, the words that the probe of mirror
// wrote (LayoutProbe), is mirror's layout, and otherwise an error that
// names the first member whose offset or size differs, or the struct's
// size.
func LayoutMismatch(cName string, mirror any, got []uint64) error {
	t := reflect.TypeOf(mirror)
	if len(got) != LayoutWords(mirror) {
		return fmt.Errorf("C struct %s: the probe wrote %d words for the %d fields of Go mirror %s", cName, len(got), t.NumField(), t)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		off, size := got[2*i], got[2*i+1]
		switch {
		case off != uint64(f.Offset):
			return fmt.Errorf("C struct %s member %s at offset %d, Go mirror %s.%s at %d", cName, member(f), off, t, f.Name, f.Offset)
		case size != uint64(f.Type.Size()):
			return fmt.Errorf("C struct %s member %s of %d bytes, Go mirror %s.%s of %d", cName, member(f), size, t, f.Name, f.Type.Size())
		}
	}
	if size := got[2*t.NumField()]; size != uint64(t.Size()) {
		return fmt.Errorf("C struct %s of %d bytes, Go mirror %s of %d", cName, size, t, t.Size())
	}
	return nil
}

// member is the C member that field f of a mirror stands for: its `c` tag,
// or its Go name.
func member(f reflect.StructField) string {
	if m := f.Tag.Get("c"); m != "" {
		return m
	}
	return f.Name
}
