/**
 * NVIDIA peer links from `nvidia-smi topo -m`: the matrix's GPU rows and columns (GPU0, GPU1, ...)
 * hold the path between two GPUs: NV# (a bonded set of # NVLinks, NVSwitch included), or a PCIe
 * path (PIX, PXB, PHB, NODE, SYS). GPUs joined by NV# cells, directly or through others, form one
 * link domain, named after its lowest PCI address: `nvlink:<BDF>`. nvidia-smi numbers GPUs in
 * PCI bus order, so GPU<n> is the n-th NVIDIA GPU by address; a matrix whose GPU count differs
 * from the GPUs the driver found is not used (no link domain is guessed).
 */

/** The pairs of GPU indexes joined by NVLink, and how many GPUs the matrix has. */
export function parseTopoMatrix(text: string): { gpus: number; links: Array<[number, number]> } {
  const lines = text.split("\n");
  const header = lines.find((l) => /^\s+GPU0\b/.test(l));
  if (!header) return { gpus: 0, links: [] };
  const gpus = header.trim().split(/\s+/).filter((c) => /^GPU\d+$/.test(c)).length;
  const links: Array<[number, number]> = [];
  for (const line of lines) {
    const m = /^GPU(\d+)\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    const row = Number(m[1]);
    const cells = m[2]!.trim().split(/\s+/).slice(0, gpus);
    cells.forEach((cell, col) => {
      if (col > row && /^NV\d+$/.test(cell)) links.push([row, col]);
    });
  }
  return { gpus, links };
}

/** Link domain by GPU address: GPUs in PCI order, as nvidia-smi numbers them; a GPU without NVLink has none. */
export function linkDomains(text: string, gpuAddresses: readonly string[]): Map<string, string> | null {
  const sorted = [...gpuAddresses].map((a) => a.toLowerCase()).sort();
  const { gpus, links } = parseTopoMatrix(text);
  if (gpus === 0 || gpus !== sorted.length) return null;
  const parent = sorted.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (const [a, b] of links) {
    const [ra, rb] = [find(a), find(b)];
    parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const linked = new Set(links.flat());
  const out = new Map<string, string>();
  sorted.forEach((bdf, i) => {
    if (linked.has(i)) out.set(bdf, `nvlink:${sorted[find(i)]}`);
  });
  return out;
}
