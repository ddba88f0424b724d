/** Reading the Prometheus text format in tests. */

/** `# TYPE` lines and samples of a Prometheus text exposition. */
export function parse(text: string) {
  const types = new Map<string, string>();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split("\n")) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) types.set(t[1]!, t[2]!);
    const s = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!s) continue;
    const labels: Record<string, string> = {};
    for (const m of (s[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    samples.push({ name: s[1]!, labels, value: Number(s[3]) });
  }
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((n, x) => n + x.value, 0);
  return { types, samples, value };
}
