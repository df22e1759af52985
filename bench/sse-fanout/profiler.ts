import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * CPU profiling of a chosen window only (not start-up or connection ramp-up), in the profiled
 * process itself: `start()` then `stop(file)` writes a V8 .cpuprofile (what `--cpu-prof` writes).
 */
export function windowProfiler() {
  let session: Session | null = null;
  return {
    async start(intervalUs = 500): Promise<void> {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
      await session.post('Profiler.start');
    },
    async stop(file: string): Promise<string> {
      if (!session) throw new Error('profiler not started');
      const { profile } = await session.post('Profiler.stop');
      // The first sample's delta counts from when the profiler was set up (the inspector's own
      // `post`), not work of the window: drop it.
      if (profile.timeDeltas?.length) profile.timeDeltas[0] = 0;
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      session = null;
      return file;
    },
  };
}
