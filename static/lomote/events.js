// Live activity feed over the workspace event log. Reconnects with ?after=<last seq> so nothing is missed.
(function () {
  "use strict";
  const select = document.getElementById("workspace");
  const list = document.getElementById("events");
  const status = document.getElementById("status");
  if (!select) return;
  let socket = null;
  let lastSeq = 0;
  let retryMs = 500;

  function show(event) {
    const item = document.createElement("li");
    item.textContent = `#${event.seq} ${event.kind} ${JSON.stringify(event.data)}`;
    list.prepend(item);
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/workspaces/${select.value}/?after=${lastSeq}`);
    socket.onopen = () => { status.textContent = "live"; status.classList.add("live"); retryMs = 500; };
    socket.onmessage = (message) => {
      const payload = JSON.parse(message.data);
      if (payload.type === "event" && payload.seq > lastSeq) { lastSeq = payload.seq; show(payload); }
    };
    socket.onclose = () => {
      status.textContent = "reconnecting…"; status.classList.remove("live");
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 10000);
    };
  }

  select.addEventListener("change", () => {
    lastSeq = 0;
    list.replaceChildren();
    if (socket) { socket.onclose = null; socket.close(); }
    connect();
  });
  connect();
})();
