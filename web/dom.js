// Building the page: elements made with their text set as text (never parsed as HTML);
// only message content, which the server sanitized, goes in as HTML (`html()`).

/**
 * An element: `h("button", {class: "x", onclick: fn, "aria-label": "Close"}, "text", child)`.
 * Attributes named `on…` are listeners; `false`, `null` and `undefined` values are left out.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (name === "value" && "value" in element) element.value = value;
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** An element holding HTML the server sanitized (message content, rendered previews). */
export function html(tag, attributes, sanitized) {
  const element = h(tag, attributes);
  element.innerHTML = sanitized;
  return element;
}

/** Text for screen readers only. */
export function hidden(text) {
  return h("span", { class: "visually-hidden" }, text);
}

/** Says `text` to screen readers (the page's live region). */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

/** A short notice at the bottom of the window. */
export function toast(text, kind = "info") {
  const area = document.getElementById("toasts");
  if (!area) return;
  const note = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
  area.append(note);
  setTimeout(() => note.remove(), kind === "error" ? 8000 : 4000);
}
