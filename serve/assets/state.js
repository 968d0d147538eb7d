// The page's state in its URL: the scenario and the parameter values set,
// so that a link reproduces a run (`?path=P&alpha=2&run=1`).

const RESERVED = new Set(["path", "run", "t_end"]);

export function read() {
  const q = new URLSearchParams(location.search);
  const set = {};
  for (const [k, v] of q) if (!RESERVED.has(k)) set[k] = v;
  return { path: q.get("path"), set, tEnd: q.get("t_end"), run: q.get("run") === "1" };
}

export function write(path, set, tEnd, ran) {
  const q = new URLSearchParams();
  if (path) q.set("path", path);
  for (const [k, v] of Object.entries(set)) q.set(k, v);
  if (tEnd) q.set("t_end", tEnd);
  if (ran) q.set("run", "1");
  history.replaceState(null, "", "?" + q.toString());
}
