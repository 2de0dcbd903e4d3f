package host

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Level is a server log level.
type Level int

// The server log levels.
const (
	LogDebug Level = iota
	LogVerbose
	LogNotice
	LogWarning
)

var levelNames = [...]*C.char{
	LogDebug:   C.CString("debug"),
	LogVerbose: C.CString("verbose"),
	LogNotice:  C.CString("notice"),
	LogWarning: C.CString("warning"),
}

// Logf writes a line to the server's log, prefixed with the module's name.
// Call it on the server thread only (in a handler or at load).
func Logf(level Level, format string, args ...any) {
	if level < LogDebug || level > LogWarning {
		level = LogWarning
	}
	msg := C.CString(fmt.Sprintf(format, args...))
	C.emq_log(levelNames[level], msg)
	C.free(unsafe.Pointer(msg))
}
