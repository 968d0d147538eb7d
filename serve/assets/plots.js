// Plots of runs with uPlot: one chart per plot spec ({title, x, y}), the
// runs overlaid (each series labelled with its run's parameter values),
// the located events (impacts, contacts, take-offs, mode switches) of the
// last run as vertical lines.

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const LOCATED = new Set(["impact", "contact", "take_off", "mode_switch"]);

const charts = [];

// True when every run has the same abscissa (no join needed).
function sameAbscissa(xs) {
  const a = xs[0];
  return xs.every((b) => b.length === a.length && (b === a || b.every((v, i) => v === a[i])));
}

function eventLines(events) {
  const times = events.filter((e) => LOCATED.has(e.kind)).map((e) => e.t);
  return (u) => {
    if (times.length === 0) return;
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "rgba(200, 0, 0, 0.35)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (const t of times) {
      const px = Math.round(u.valToPos(t, "x", true));
      ctx.moveTo(px, u.bbox.top);
      ctx.lineTo(px, u.bbox.top + u.bbox.height);
    }
    ctx.stroke();
    ctx.restore();
  };
}

// The data and series of `spec` over `runs`.
function table(spec, runs) {
  const usable = runs.filter((r) => r.columns[spec.x] && spec.y.some((c) => r.columns[c]));
  const series = [{ label: spec.x }];
  const parts = [];
  let k = 0;
  for (const r of usable) {
    const part = [r.columns[spec.x]];
    for (const c of spec.y) {
      if (!r.columns[c]) continue;
      part.push(r.columns[c]);
      series.push({
        label: usable.length > 1 || r.label ? `${c} · ${r.label || "defaults"}` : c,
        stroke: COLORS[k++ % COLORS.length],
        width: r === usable[usable.length - 1] ? 2 : 1,
        spanGaps: true,
      });
    }
    parts.push(part);
  }
  if (parts.length === 0) return null;
  let data;
  if (sameAbscissa(parts.map((p) => p[0]))) {
    data = [parts[0][0]];
    for (const p of parts) data.push(...p.slice(1));
  } else {
    data = uPlot.join(parts);
  }
  return { data, series };
}

// Draws every spec over the runs in `container` (replacing what was there).
export function draw(container, specs, runs) {
  for (const c of charts.splice(0)) c.chart.destroy();
  container.replaceChildren();
  const last = runs[runs.length - 1];
  const width = Math.max(400, container.clientWidth - 20);
  for (const spec of specs) {
    const t = table(spec, runs);
    if (!t) continue;
    const div = document.createElement("div");
    div.className = "plot";
    container.append(div);
    const chart = new uPlot(
      {
        title: spec.title || spec.y.join(", "),
        width,
        height: 280,
        scales: { x: { time: false } },
        series: t.series,
        axes: [{ label: spec.x }, {}],
        hooks: { draw: [eventLines(last ? last.events : [])] },
      },
      t.data,
      div,
    );
    charts.push({ spec, chart });
  }
}

// What the charts hold, for tests: each chart's title, series labels and
// data (the arrays uPlot plots).
export function plotted() {
  return charts.map(({ spec, chart }) => ({
    title: spec.title || spec.y.join(", "),
    x: spec.x,
    labels: chart.series.map((s) => s.label),
    data: chart.data,
  }));
}

// A plot of y against x from points (sorted by x), for the sweep tab.
export function scatter(container, xName, yName, xs, ys) {
  container.replaceChildren();
  const order = xs.map((x, i) => i).filter((i) => Number.isFinite(xs[i])).sort((a, b) => xs[a] - xs[b]);
  const data = [order.map((i) => xs[i]), order.map((i) => ys[i])];
  return new uPlot(
    {
      title: `${yName} against ${xName}`,
      width: Math.max(400, container.clientWidth - 20),
      height: 260,
      scales: { x: { time: false } },
      series: [{ label: xName }, { label: yName, stroke: COLORS[0], points: { show: true, size: 6 } }],
      axes: [{ label: xName }, {}],
    },
    data,
    container,
  );
}
