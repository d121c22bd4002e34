// Header-only module; this file exists because a SwiftPM C target needs one source file.
// The static assertions pin the ABI so a change to the header cannot silently change layouts.
#include "AulosRender.h"
#include <stddef.h>
_Static_assert(sizeof(AulosTimeStamp) == 24, "AulosTimeStamp layout");
_Static_assert(sizeof(AulosBuffer) == 16, "AulosBuffer layout");
_Static_assert(offsetof(AulosBufferList, buffers) == 8, "AulosBufferList layout");
