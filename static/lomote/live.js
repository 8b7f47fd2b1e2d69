// The workspace event log over a WebSocket. Keeps the last seq seen; on close it reconnects with
// ?after=<last seq>, and the server replays what was missed, so a dropped socket loses nothing.

export class LiveLog {
  constructor({ workspaceId, after = 0, onEvent, onStatus }) {
    this.workspaceId = workspaceId;
    this.lastSeq = after;
    this.onEvent = onEvent;
    this.onStatus = onStatus || (() => {});
    this.socket = null;
    this.retryMs = 300;
    this.stopped = false;
    this.connects = 0;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${location.host}/ws/workspaces/${this.workspaceId}/?after=${this.lastSeq}`;
  }

  connect() {
    this.stopped = false;
    this.onStatus("connecting");
    const socket = new WebSocket(this.url());
    this.socket = socket;
    this.connects += 1;
    socket.onopen = () => { this.retryMs = 300; };
    socket.onmessage = (message) => {
      let payload;
      try { payload = JSON.parse(message.data); } catch { return; }
      if (payload.type === "event") {
        if (payload.seq <= this.lastSeq) return; // already applied (a replay overlapping a push)
        this.lastSeq = payload.seq;
        try { this.onEvent(payload); } catch (error) { console.error("event handler failed", payload, error); }
      } else if (payload.type === "replayed") {
        this.onStatus("live");
      }
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.stopped) { this.onStatus("offline"); return; }
      this.onStatus("reconnecting");
      setTimeout(() => { if (!this.stopped && !this.socket) this.connect(); }, this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 3000);
    };
  }

  /** Drop the connection as a network failure would: it reconnects by itself. */
  drop() {
    if (this.socket) this.socket.close();
  }

  stop() {
    this.stopped = true;
    if (this.socket) this.socket.close();
  }
}
