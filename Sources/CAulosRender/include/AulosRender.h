// The render ABI of Aulos: Core Audio's CoreAudioTypes.h / AUComponent.h render types, carried to Linux.
//
// These live in C because a `@convention(c)` function type can only carry C-representable types, and the
// render path must be able to call a unit or a host callback without Swift closures, existentials or ARC.
// Swift code sees them through AulosCore, which re-exports this module and adds conveniences.
#ifndef AULOS_RENDER_H
#define AULOS_RENDER_H

#include <stdint.h>

/// A status code in Core Audio's OSStatus convention: 0 is success, negative values are AudioUnitError codes.
typedef int32_t AulosStatus;

/// Core Audio's AudioUnitRenderActionFlags (same bit values).
typedef enum __attribute__((flag_enum, enum_extensibility(open))) AulosRenderActionFlags : uint32_t {
    AulosRenderActionPreRender = 1u << 2,
    AulosRenderActionPostRender = 1u << 3,
    /// A hint that the buffers are silent. The buffers must still be zeroed.
    AulosRenderActionOutputIsSilence = 1u << 4,
    AulosRenderActionPreRenderError = 1u << 8,
    AulosRenderActionPostRenderError = 1u << 9,
} AulosRenderActionFlags;

/// Which fields of an AulosTimeStamp are valid (Core Audio's kAudioTimeStamp*Valid).
typedef enum __attribute__((flag_enum, enum_extensibility(open))) AulosTimeStampFlags : uint32_t {
    AulosTimeStampSampleTimeValid = 1u << 0,
    AulosTimeStampHostTimeValid = 1u << 1,
} AulosTimeStampFlags;

/// Core Audio's AudioTimeStamp, reduced to what Aulos uses. `sampleTime` counts frames since the I/O unit
/// started and advances by the frame count of every render cycle; `hostTime` is CLOCK_MONOTONIC in ns.
typedef struct AulosTimeStamp {
    int64_t sampleTime;
    uint64_t hostTime;
    AulosTimeStampFlags flags;
} AulosTimeStamp;

/// Core Audio's AudioBuffer: one buffer of `byteSize` bytes holding `channelCount` interleaved channels
/// (1 for a non-interleaved format).
typedef struct AulosBuffer {
    uint32_t channelCount;
    uint32_t byteSize;
    void *_Nullable data;
} AulosBuffer;

/// Core Audio's AudioBufferList: one buffer per channel for non-interleaved formats, one in total for
/// interleaved ones. The buffers array is owned by whoever built the list, never by the callee.
typedef struct AulosBufferList {
    uint32_t bufferCount;
    AulosBuffer *_Nonnull buffers;
} AulosBufferList;

/// Core Audio's AURenderCallback: fills `ioData` with `frameCount` frames in the stream format of `bus`.
typedef AulosStatus (*AulosRenderCallback)(void *_Nullable refCon,
                                           AulosRenderActionFlags *_Nonnull actionFlags,
                                           const AulosTimeStamp *_Nonnull timeStamp,
                                           uint32_t bus,
                                           uint32_t frameCount,
                                           AulosBufferList *_Nonnull ioData);

/// A unit's render entry on the render thread. `kernel` is the unit's render-side state; `inputs` is an
/// opaque handle the kernel passes back to AulosCore to pull its input buses.
typedef AulosStatus (*AulosKernelRenderFunction)(void *_Nonnull kernel,
                                                 const void *_Nonnull inputs,
                                                 AulosRenderActionFlags *_Nonnull actionFlags,
                                                 const AulosTimeStamp *_Nonnull timeStamp,
                                                 uint32_t outputBus,
                                                 uint32_t frameCount,
                                                 AulosBufferList *_Nonnull ioData);

/// Core Audio's HostCallback_GetBeatAndTempo: the beat at the first frame of the current slice and the tempo
/// (beats per minute). Either pointer may be NULL.
typedef AulosStatus (*AulosHostBeatAndTempoProc)(void *_Nullable hostUserData,
                                                 double *_Nullable currentBeat,
                                                 double *_Nullable currentTempo);

/// Core Audio's HostCallback_GetMusicalTimeLocation.
typedef AulosStatus (*AulosHostMusicalTimeLocationProc)(void *_Nullable hostUserData,
                                                        uint32_t *_Nullable deltaSampleOffsetToNextBeat,
                                                        float *_Nullable timeSigNumerator,
                                                        uint32_t *_Nullable timeSigDenominator,
                                                        double *_Nullable currentMeasureDownBeat);

/// Core Audio's HostCallback_GetTransportState2 (booleans as 0/1 bytes).
typedef AulosStatus (*AulosHostTransportStateProc)(void *_Nullable hostUserData,
                                                   uint8_t *_Nullable isPlaying,
                                                   uint8_t *_Nullable isRecording,
                                                   uint8_t *_Nullable transportStateChanged,
                                                   double *_Nullable currentSampleInTimeLine,
                                                   uint8_t *_Nullable isCycling,
                                                   double *_Nullable cycleStartBeat,
                                                   double *_Nullable cycleEndBeat);

/// Core Audio's HostCallbackInfo: what a host installs on a unit (property HostCallbacks, 27).
typedef struct AulosHostCallbackInfo {
    void *_Nullable hostUserData;
    AulosHostBeatAndTempoProc _Nullable beatAndTempo;
    AulosHostMusicalTimeLocationProc _Nullable musicalTimeLocation;
    AulosHostTransportStateProc _Nullable transportState;
} AulosHostCallbackInfo;

// The render thread's watch, the output guard and the crash report.
#include "AulosRenderWatch.h"

#endif
