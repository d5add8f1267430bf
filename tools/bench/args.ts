// The benches' own number options (parsed by node:util parseArgs): a whole number at least `min`, or
// exit 2 naming the option.
export function wholeOption(name: string, value: string | undefined, min: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value ?? '') || n < min) {
    process.stderr.write(`--${name}: expected a whole number from ${min}, got ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
  return n;
}
