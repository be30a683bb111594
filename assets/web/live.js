// The page's one stream (/api/live): every terminal, instance, tick and event it shows comes
// over it. A view opens it with the topics it needs; opening another closes the one before,
// so a page never holds more than one (HTTP/1.1 allows six connections per host).
let current;

export function openLive(topics, handlers) {
  current?.close();
  const params = new URLSearchParams(Object.entries(topics).filter(([, v]) => v !== undefined && v !== ''));
  const source = new EventSource(`/api/live?${params}`);
  for (const [name, handle] of Object.entries(handlers)) source.addEventListener(name, (e) => handle(JSON.parse(e.data)));
  current = source;
  return () => {
    source.close();
    if (current === source) current = undefined;
  };
}
