// Environment parsing shared by the benchmarks' settings modules.

/** An integer knob: the fallback when unset; outside [min, max] or not an integer, an error naming the variable. */
export function intEnv(name, fallback, min, max) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}
