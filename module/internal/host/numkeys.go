package host

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

// numkeys runs C's numkeys parser, the one key-position requests use, so a
// test can hold it to its rules; -1 means the server sees no keys.
func numkeys(arg []byte, argc int) int {
	p := C.CBytes(arg)
	defer C.free(p)
	return int(C.emq_numkeys(C.uintptr_t(uintptr(p)), C.size_t(len(arg)), C.int(argc)))
}
