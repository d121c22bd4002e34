// lilv for the benchmark's C host (CReferenceLV2Host); the module exists for its pkg-config flags and link.
#include <lilv/lilv.h>
