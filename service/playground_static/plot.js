// A small line plot on a canvas: time on x, one numeric attribute on y, one line per group.
const COLORS = ["#2f6fdb", "#d9480f", "#2b8a3e", "#ae3ec9", "#e67700", "#0b7285", "#c92a2a", "#5c7cfa"];
const MAX_POINTS = 500;

export class Plot {
  constructor(canvas, legend) {
    this.canvas = canvas;
    this.legend = legend;
    this.series = new Map();
  }

  /** Start over (another stream, attribute or grouping). */
  reset() { this.series.clear(); this.draw(); }

  /** Add points: `rows` are [{timestamp, y, group}]. */
  add(rows) {
    for (const { timestamp, y, group } of rows) {
      if (typeof y !== "number" || !Number.isFinite(y)) continue;
      const key = group === undefined || group === null ? "" : String(group);
      if (!this.series.has(key)) this.series.set(key, []);
      const points = this.series.get(key);
      points.push([timestamp, y]);
      if (points.length > MAX_POINTS) points.shift();
    }
    this.draw();
  }

  /** How many points are drawn (the page tests read it). */
  get points() { let n = 0; for (const p of this.series.values()) n += p.length; return n; }

  draw() {
    const { canvas } = this;
    const ctx = canvas.getContext("2d");
    const w = canvas.width, h = canvas.height, pad = 40;
    ctx.clearRect(0, 0, w, h);
    ctx.strokeStyle = "#889"; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(pad, 10); ctx.lineTo(pad, h - pad); ctx.lineTo(w - 10, h - pad); ctx.stroke();
    const all = [...this.series.values()].flat();
    this.legend.textContent = "";
    if (!all.length) return;
    let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
    for (const [x, y] of all) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
    if (x1 === x0) x1 = x0 + 1;
    if (y1 === y0) { y1 += 1; y0 -= 1; }
    const sx = (x) => pad + (x - x0) / (x1 - x0) * (w - pad - 10);
    const sy = (y) => h - pad - (y - y0) / (y1 - y0) * (h - pad - 10);
    ctx.fillStyle = "#556"; ctx.font = "11px sans-serif";
    ctx.fillText(String(+y1.toPrecision(4)), 2, 14); ctx.fillText(String(+y0.toPrecision(4)), 2, h - pad);
    ctx.fillText(new Date(x0).toISOString().slice(11, 23), pad, h - pad + 14);
    ctx.fillText(new Date(x1).toISOString().slice(11, 23), w - 90, h - pad + 14);
    let i = 0;
    for (const [key, points] of this.series) {
      const color = COLORS[i++ % COLORS.length];
      ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = 1.5;
      ctx.beginPath();
      points.forEach(([x, y], j) => (j ? ctx.lineTo(sx(x), sy(y)) : ctx.moveTo(sx(x), sy(y))));
      ctx.stroke();
      for (const [x, y] of points) ctx.fillRect(sx(x) - 1.5, sy(y) - 1.5, 3, 3);
      const item = document.createElement("span");
      item.style.color = color;
      item.textContent = `● ${key || "(all)"}`;
      this.legend.append(item);
    }
  }
}
