// libFuzzer entry: any bytes as a SoundFont, through the sampler's loading path — Aulos's own inspection
// (SoundFontFile) first, then, for what it accepts, libfluidsynth itself: load the font, play a note on a
// melodic and a drum channel for two blocks, reset, unload. A crash inside FluidSynth (a real Debian
// library, not instrumented) still stops the run as a SEGV with the input saved: the evidence for whether
// loading fonts belongs in a child process. One synth is reused, as creating one per input would make a
// million inputs take hours.
import AulosFluid
import CFluidSynthFuzz
import FuzzSupport
import Glibc

let path = "/tmp/aulos-fuzz-soundfont-\(getpid()).sf2"
nonisolated(unsafe) let settings = new_fluid_settings()!
nonisolated(unsafe) let synth: OpaquePointer = {
    for level in [FLUID_PANIC, FLUID_ERR, FLUID_WARN, FLUID_INFO, FLUID_DBG] {
        _ = fluid_set_log_function(Int32(level.rawValue), nil, nil)
    }
    fluid_settings_setint(settings, "synth.threadsafe-api", 0)
    fluid_settings_setint(settings, "synth.polyphony", 64)
    fluid_settings_setint(settings, "synth.dynamic-sample-loading", 0)
    fluid_settings_setint(settings, "synth.reverb.active", 0)
    fluid_settings_setint(settings, "synth.chorus.active", 0)
    return new_fluid_synth(settings)!
}()
nonisolated(unsafe) let left = UnsafeMutablePointer<Float>.allocate(capacity: 128)
nonisolated(unsafe) let right = UnsafeMutablePointer<Float>.allocate(capacity: 128)

runFuzzer { data, count in
    guard let data else { return 0 }
    let file = fopen(path, "wb")!
    fwrite(data, 1, count, file)
    fclose(file)
    guard (try? SoundFontFile.inspect(path)) != nil else { return 0 }
    let id = fluid_synth_sfload(synth, path, 1)
    guard id >= 0 else { return 0 }
    fluid_synth_noteon(synth, 0, 60, 100)
    fluid_synth_noteon(synth, 9, 36, 100)
    fluid_synth_write_float(synth, 128, left, 0, 1, right, 0, 1)
    fluid_synth_noteoff(synth, 0, 60)
    fluid_synth_write_float(synth, 128, left, 0, 1, right, 0, 1)
    fluid_synth_system_reset(synth)
    fluid_synth_sfunload(synth, Int32(id), 1)
    return 0
}
