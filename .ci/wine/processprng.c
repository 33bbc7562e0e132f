/* bcryptprimitives.dll for Wine 8, which lacks ProcessPrng: Rust's std imports it for its random
   seeds (HashMap keys). Implemented with RtlGenRandom (advapi32's SystemFunction036), which Wine
   has. Test harness only: never shipped with iocap. Built by .ci/windows.sh with mingw. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
