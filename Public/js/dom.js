// Building and replacing DOM nodes without innerHTML: every text is a text node, so nothing the
// service returns (a customer's name, a note) can ever become markup.

/**
 * Creates an element. `attrs`: `class`, `text`, `on<Event>` handlers, `dataset` (an object), booleans
 * (set when true, left out when false), anything else as an attribute. Children: nodes, strings, numbers,
 * arrays of those; null, undefined and false are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'class') element.className = value;
    else if (name === 'text') element.textContent = String(value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `element` with `children`. */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** Shows or hides an element (the `hidden` attribute, which the stylesheet keeps authoritative). */
export function show(element, visible = true) {
  element.hidden = !visible;
}

/** The element with this id; throws when the page lacks it, which is a bug in the page, not input. */
export function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`missing #${id}`);
  return element;
}

/**
 * Shows `message` in a status region (role=status or role=alert, so screen readers announce it);
 * `kind` is 'error', 'ok' or 'info' for the colour. An empty message hides the region.
 */
export function announce(region, message, kind = 'info') {
  region.textContent = message ?? '';
  region.dataset.kind = kind;
  region.hidden = !message;
}

/** Disables a form's controls while `work` runs, so a double click cannot send twice. */
export async function whileBusy(form, work) {
  const controls = [...form.querySelectorAll('button, input, select, textarea')].filter((c) => !c.disabled);
  controls.forEach((c) => { c.disabled = true; });
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    controls.forEach((c) => { c.disabled = false; });
    form.removeAttribute('aria-busy');
  }
}
