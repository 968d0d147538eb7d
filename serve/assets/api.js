// The server's JSON API (docs/serve.md): one function per endpoint.

async function answer(response) {
  const body = await response.json();
  if (!response.ok) {
    const e = body.error || { message: response.statusText };
    const err = new Error(e.message);
    err.kind = e.kind;
    err.line = e.line;
    err.status = response.status;
    throw err;
  }
  return body;
}

function post(url, body) {
  return fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).then(answer);
}

export const scenarios = () => fetch("/api/scenarios").then(answer);
export const scenario = (path) =>
  fetch("/api/scenario?path=" + encodeURIComponent(path)).then(answer);
export const run = (request) => post("/api/run", request);
export const sweep = (request) => post("/api/sweep", request);
export const cancel = (id) => post("/api/cancel", { id });

// Progress reports of the run `id` (server-sent events) to `report`;
// returns a function that stops listening.
export function progress(id, report) {
  const source = new EventSource("/api/progress?id=" + encodeURIComponent(id));
  source.onmessage = (m) => {
    const p = JSON.parse(m.data);
    report(p);
    if (p.state === "done" || p.state === "unknown") source.close();
  };
  source.onerror = () => source.close();
  return () => source.close();
}

// A column's numbers: JSON numbers, and the texts the server sends for
// values JSON cannot hold.
export function numbers(values) {
  return values.map((x) => (typeof x === "number" ? x : Number(x)));
}
