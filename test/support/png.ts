/**
 * Reads the PNG screenshots Chromium takes (8-bit RGB or RGBA, not interlaced) with node:zlib,
 * so a test can check what was drawn: the console's capacity bars, by colour.
 */
import { inflateSync } from "node:zlib";

export interface Image {
  width: number;
  height: number;
  /** RGBA, row by row. */
  rgba: Uint8Array;
}

export function decodePng(png: Buffer): Image {
  let at = 8;
  let width = 0, height = 0, colourType = 0;
  const data: Buffer[] = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      colourType = body[9]!;
      if (body[8] !== 8 || body[12] !== 0 || (colourType !== 2 && colourType !== 6)) throw new Error("only 8-bit RGB(A), non-interlaced PNGs");
    } else if (type === "IDAT") data.push(body);
    at += 12 + length;
  }
  const bpp = colourType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * bpp;
  const out = new Uint8Array(width * height * 4);
  const prev = new Uint8Array(stride);
  const cur = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp]! : 0, b = prev[i]!, c = i >= bpp ? prev[i - bpp]! : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter]!;
      cur[i] = (line[i]! + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      out.set([cur[x * bpp]!, cur[x * bpp + 1]!, cur[x * bpp + 2]!, bpp === 4 ? cur[x * bpp + 3]! : 255], (y * width + x) * 4);
    }
    prev.set(cur);
  }
  return { width, height, rgba: out };
}

/** The console's bar colours (console/src/styles.css: --warn, --muted, --ok). */
const BAR_COLOURS = { used: [0x9a, 0x67, 0x00], reserved: [0x57, 0x60, 0x6a], free: [0x1a, 0x7f, 0x37] } as const;

/** Each part's share of a capacity bar's width, from the colours along its middle row. */
export function barShares(png: Buffer): Record<keyof typeof BAR_COLOURS, number> {
  const img = decodePng(png);
  const y = Math.floor(img.height / 2);
  const counts = { used: 0, reserved: 0, free: 0 };
  for (let x = 0; x < img.width; x++) {
    const px = img.rgba.subarray((y * img.width + x) * 4, (y * img.width + x) * 4 + 3);
    for (const [part, rgb] of Object.entries(BAR_COLOURS) as Array<[keyof typeof BAR_COLOURS, readonly number[]]>) {
      if (rgb.every((v, i) => Math.abs(v - px[i]!) < 24)) counts[part]++;
    }
  }
  const all = counts.used + counts.reserved + counts.free || 1;
  return { used: counts.used / all, reserved: counts.reserved / all, free: counts.free / all };
}
