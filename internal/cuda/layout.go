package cuda

import (
	"fmt"
	"reflect"
	"strings"
)

// LayoutAsserts returns C++ static_asserts that the C struct cName is laid
// out as the Go struct mirror: each field of mirror at the same offset and
// of the same size as the member of the same name (the field's `c` tag, or
// its Go name), and the same total size. Appended to a translation unit
// after the struct's definition, they make NVRTC refuse the source when the
// two differ, with a message that names the member: a struct passed to a
// kernel by value is then never read with another layout. The check costs
// nothing at run time and needs no GPU. The offset is the address of the
// member of a struct at address 0, which NVRTC folds to a constant (it
// has neither offsetof nor __builtin_offsetof).
func LayoutAsserts(cName string, mirror any) string {
	t := reflect.TypeOf(mirror)
	var b strings.Builder
	fmt.Fprintf(&b, "#line 1 \"layout of %s\"\n", t)
	for i := range t.NumField() {
		f := t.Field(i)
		member := f.Tag.Get("c")
		if member == "" {
			member = f.Name
		}
		fmt.Fprintf(&b, "static_assert((unsigned long long)&((%[1]s *)0)->%[2]s == %[3]d && sizeof(((%[1]s *)0)->%[2]s) == %[4]d, "+
			"\"%[1]s::%[2]s is not at offset %[3]d with %[4]d bytes, as %[5]s.%[6]s of Go\");\n",
			cName, member, f.Offset, f.Type.Size(), t, f.Name)
	}
	fmt.Fprintf(&b, "static_assert(sizeof(%[1]s) == %[2]d, \"%[1]s is not of %[2]d bytes, as %[3]s of Go\");\n",
		cName, t.Size(), t)
	return b.String()
}
