// What a person sees of the studio's layout, measured in the page (tests/browser/test_studio_layout.py):
// figures, and the problems found (none when the layout holds). Evaluated with page.evaluate().
() => {
  const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
  const se = document.scrollingElement;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const round = (r) => ({ left: Math.round(r.left), right: Math.round(r.right), top: Math.round(r.top), bottom: Math.round(r.bottom) });
  const problems = [];
  window.scrollTo(0, 0);
  if (se.scrollWidth > se.clientWidth) problems.push(`page scrolls sideways: ${se.scrollWidth} > ${se.clientWidth}`);

  const chatColumn = document.querySelector("#studio > .left"), canvas = document.querySelector("#studio > .canvas");
  const c = canvas.getBoundingClientRect();
  // The chat column as far as its content reaches: text that does not wrap spills out of the column's box.
  const box = chatColumn.getBoundingClientRect();
  const l = { left: box.left, top: box.top, bottom: box.bottom, right: Math.max(box.right, box.left + chatColumn.scrollWidth) };
  const overlap = Math.min(l.right, c.right) - Math.max(l.left, c.left) > 0.5 && Math.min(l.bottom, c.bottom) - Math.max(l.top, c.top) > 0.5;
  if (overlap) problems.push(`chat column ${JSON.stringify(round(l))} overlaps the canvas ${JSON.stringify(round(c))}`);
  for (const [column, r] of [[chatColumn, l], [canvas, c]]) {
    if (r.left < -0.5 || r.right > vw + 0.5) problems.push(`${name(column)} leaves the viewport: ${JSON.stringify(round(r))}`);
  }

  // Every box holds its own text: no element's content is wider than the element (form fields scroll by nature).
  const overflowing = [];
  for (const el of document.querySelectorAll("#studio *")) {
    if (["TEXTAREA", "INPUT", "SELECT", "OPTION"].includes(el.tagName) || !el.clientWidth) continue;
    if (el.closest(".visually-hidden")) continue; // a 1px box by design, for screen readers
    if (el.scrollWidth > el.clientWidth + 1) overflowing.push(`${name(el)} ${el.scrollWidth}>${el.clientWidth}`);
  }
  if (overflowing.length) problems.push(`boxes wider inside than outside: ${overflowing.slice(0, 8).join(", ")}`);

  // Every button: reachable by vertical scrolling only, inside every scrolling box around it and the viewport,
  // and the element at its centre is the button itself (nothing covers it).
  const buttons = [...document.querySelectorAll("#studio button")].filter((b) => b.getClientRects().length);
  let covered = 0, clipped = 0, sideways = 0;
  for (const button of buttons) {
    window.scrollTo(0, window.scrollY);
    for (let p = button.parentElement; p; p = p.parentElement) p.scrollLeft = 0;
    button.scrollIntoView({ block: "center", inline: "nearest" });
    const label = `${name(button.closest("[data-card], .tile, .node, .notice, li, section") || button)} "${button.textContent.trim().slice(0, 30)}"`;
    const scrolledSideways = [];
    if (window.scrollX !== 0) scrolledSideways.push("the page");
    for (let p = button.parentElement; p; p = p.parentElement) if (p.scrollLeft !== 0) scrolledSideways.push(name(p));
    if (scrolledSideways.length) { sideways += 1; problems.push(`${label} needs sideways scrolling of ${scrolledSideways.join(", ")}`); }
    const b = button.getBoundingClientRect();
    const boxes = [["viewport", { left: 0, top: 0, right: vw, bottom: vh }]];
    for (let p = button.parentElement; p && p !== document.body; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (style.overflowX !== "visible" || style.overflowY !== "visible") {
        const r = p.getBoundingClientRect();
        boxes.push([name(p), { left: r.left + p.clientLeft, top: r.top + p.clientTop, right: r.left + p.clientLeft + p.clientWidth, bottom: r.top + p.clientTop + p.clientHeight }]);
      }
    }
    const outside = boxes.filter(([, r]) => b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5);
    if (outside.length) { clipped += 1; problems.push(`${label} clipped by ${outside.map(([n]) => n).join(", ")}: ${JSON.stringify(round(b))}`); }
    const hit = document.elementFromPoint((b.left + b.right) / 2, (b.top + b.bottom) / 2);
    if (!hit || !button.contains(hit)) { covered += 1; problems.push(`${label} covered by ${hit ? name(hit) : "nothing (off screen)"}`); }
  }
  window.scrollTo(0, 0);
  return {
    figures: {
      scrollWidth: se.scrollWidth, clientWidth: se.clientWidth, chat: round(l), canvas: round(c), overlap,
      overflowingBoxes: overflowing.length, buttons: buttons.length, covered, clipped, sideways,
    },
    problems,
  };
}
