// A small, safe Markdown renderer: agent text → DOM nodes built with createElement / textContent.
// Supported: paragraphs, headings, fenced and indented code, block quotes, lists, rules, and inline
// code, bold, italic, links (http and https only; anything else stays text). No HTML passes through.

import { h, safeUrl } from "./dom.js";

const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|\*(?=[^\s*])([^*]*?[^\s*])\*|(?<![\w])_(?=\S)([^_]*?\S)_(?![\w])|\[([^\]\n]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"])/g;

export function renderInline(text, parent) {
  let last = 0;
  const re = new RegExp(INLINE.source, "g"); // own state: this function recurses
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
    if (m[1] !== undefined) {
      parent.append(h("code", { text: m[2].replace(/^ (.*) $/s, "$1") }));
    } else if (m[3] !== undefined || m[4] !== undefined) {
      parent.append(renderInline(m[3] ?? m[4], h("strong")));
    } else if (m[5] !== undefined || m[6] !== undefined) {
      parent.append(renderInline(m[5] ?? m[6], h("em")));
    } else if (m[7] !== undefined) {
      const href = safeUrl(m[8]);
      if (href) {
        parent.append(renderInline(m[7], link(href)));
      } else {
        parent.append(document.createTextNode(m[0]));
      }
    } else if (m[9] !== undefined) {
      const href = safeUrl(m[9]);
      parent.append(href ? link(href, m[9]) : document.createTextNode(m[9]));
    }
    last = re.lastIndex;
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
  return parent;
}

function link(href, text) {
  return h("a", { href, rel: "noopener noreferrer nofollow", target: "_blank", text });
}

const FENCE = /^(\s{0,3})(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET = /^(\s*)([-*+])\s+(.*)$/;
const ORDERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;

/** Render Markdown `text` into a new <div class="md">. */
export function renderMarkdown(text) {
  const root = h("div", { class: "md" });
  renderBlocks(String(text ?? "").replace(/\r\n?/g, "\n").split("\n"), root, 0);
  return root;
}

function renderBlocks(lines, parent, depth) {
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) parent.append(renderInline(para.join("\n"), h("p")));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = FENCE.exec(line))) {
      flush();
      const close = m[2];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(close)) body.push(lines[i++]);
      i += 1;
      const code = h("code", { text: body.join("\n") });
      if (m[3]) code.dataset.lang = m[3];
      parent.append(h("pre", {}, code));
      continue;
    }
    if (!line.trim()) {
      flush();
      i += 1;
      continue;
    }
    if ((m = HEADING.exec(line))) {
      flush();
      parent.append(renderInline(m[2], h(`h${Math.min(6, m[1].length + 2)}`)));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      flush();
      parent.append(h("hr"));
      i += 1;
      continue;
    }
    if (QUOTE.test(line) && depth < 8) {
      flush();
      const body = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        body.push(m[1]);
        i += 1;
      }
      renderBlocks(body, parent.appendChild(h("blockquote")), depth + 1);
      continue;
    }
    if ((BULLET.test(line) || ORDERED.test(line)) && depth < 8) {
      flush();
      i = renderList(lines, i, parent, depth);
      continue;
    }
    if (/^ {4}/.test(line) && !para.length) {
      const body = [];
      while (i < lines.length && (/^ {4}/.test(lines[i]) || !lines[i].trim())) {
        body.push(lines[i].slice(4));
        i += 1;
      }
      while (body.length && !body[body.length - 1].trim()) body.pop();
      parent.append(h("pre", {}, h("code", { text: body.join("\n") })));
      continue;
    }
    para.push(line);
    i += 1;
  }
  flush();
}

function renderList(lines, start, parent, depth) {
  const first = BULLET.exec(lines[start]) || ORDERED.exec(lines[start]);
  const ordered = !BULLET.test(lines[start]);
  const indent = first[1].length;
  const list = h(ordered ? "ol" : "ul");
  if (ordered && first[2] !== "1") list.setAttribute("start", String(parseInt(first[2], 10)));
  let i = start;
  let item = null;
  while (i < lines.length) {
    const line = lines[i];
    const m = (ordered ? ORDERED : BULLET).exec(line);
    if (m && m[1].length === indent) {
      item = [m[3]];
      list.append(h("li"));
      list.lastChild.item = item;
      i += 1;
      continue;
    }
    if (!line.trim()) {
      const next = lines[i + 1];
      if (next !== undefined && /^\s+/.test(next) && next.search(/\S/) > indent) {
        item.push("");
        i += 1;
        continue;
      }
      break;
    }
    if (line.search(/\S/) > indent) {
      item.push(line.slice(Math.min(line.search(/\S/), indent + 2)));
      i += 1;
      continue;
    }
    break;
  }
  for (const li of list.children) {
    const body = li.item;
    delete li.item;
    if (body.length === 1) renderInline(body[0], li);
    else renderBlocks(body, li, depth + 1);
  }
  parent.append(list);
  return i;
}
