// A line chart as a standalone SVG document: enough for time against fleet
// size, without a plotting dependency.

interface Series {
  label: string;
  color: string;
  dashed?: boolean;
  points: ReadonlyArray<{ x: number; y: number }>;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  width?: number;
  height?: number;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A step of 1, 2 or 5 times a power of ten that cuts [0, max] into about `count` intervals. */
function niceStep(max: number, count: number): number {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const multiple = [1, 2, 5, 10].find((candidate) => candidate * power >= raw) ?? 10;
  return multiple * power;
}

function ticks(max: number): { top: number; values: number[] } {
  const step = niceStep(max > 0 ? max : 1, 5);
  const top = Math.ceil((max > 0 ? max : 1) / step) * step;
  const values: number[] = [];
  // At most a handful of ticks: top / step is about 5 by construction.
  for (let index = 0; index * step <= top + step / 2; index++) values.push(index * step);
  return { top, values };
}

function label(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(Math.max(0, -Math.floor(Math.log10(value)) + 1));
}

export function lineChart(options: ChartOptions): string {
  const width = options.width ?? 760;
  const height = options.height ?? 460;
  const margin = { left: 70, right: 24, top: 48, bottom: 56 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const points = options.series.flatMap((series) => series.points);
  const x = ticks(Math.max(0, ...points.map((point) => point.x)));
  const y = ticks(Math.max(0, ...points.map((point) => point.y)));
  // Tenths of a pixel are as fine as a screen shows.
  const round = (value: number) => Math.round(value * 10) / 10;
  const px = (value: number) => round(margin.left + (value / x.top) * plotWidth);
  const py = (value: number) => round(margin.top + plotHeight - (value / y.top) * plotHeight);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    // The title element is the chart's text alternative for screen readers.
    `<title>${escapeXml(options.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="15">${escapeXml(options.title)}</text>`,
  ];
  for (const value of y.values) {
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${py(value)}" y2="${py(value)}" stroke="#e5e5e5"/>`,
      `<text x="${margin.left - 8}" y="${py(value) + 4}" text-anchor="end">${label(value)}</text>`,
    );
  }
  for (const value of x.values) {
    parts.push(
      `<line x1="${px(value)}" x2="${px(value)}" y1="${margin.top + plotHeight}" y2="${margin.top + plotHeight + 5}" stroke="#333"/>`,
      `<text x="${px(value)}" y="${margin.top + plotHeight + 20}" text-anchor="middle">${label(value)}</text>`,
    );
  }
  parts.push(
    `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${margin.top + plotHeight}" y2="${margin.top + plotHeight}" stroke="#333"/>`,
    `<line x1="${margin.left}" x2="${margin.left}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#333"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`,
    `<text transform="translate(18 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.yLabel)}</text>`,
  );
  options.series.forEach((series, index) => {
    const path = series.points.map((point) => `${px(point.x)},${py(point.y)}`).join(" ");
    const dash = series.dashed ? ' stroke-dasharray="6 4"' : "";
    parts.push(`<polyline points="${path}" fill="none" stroke="${series.color}" stroke-width="2"${dash}/>`);
    for (const point of series.points) {
      parts.push(
        `<circle cx="${px(point.x).toFixed(1)}" cy="${py(point.y).toFixed(1)}" r="3" fill="${series.color}"/>`,
      );
    }
    const legendY = margin.top + 8 + index * 18;
    parts.push(
      `<line x1="${margin.left + 12}" x2="${margin.left + 36}" y1="${legendY}" y2="${legendY}" stroke="${series.color}" stroke-width="2"${dash}/>`,
      `<text x="${margin.left + 42}" y="${legendY + 4}">${escapeXml(series.label)}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
