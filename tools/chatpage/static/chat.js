// The chat page: renders what LINE renders from the timeline the page's server keeps, and sends what a
// phone sends (through the server, which signs). Every text from a message is set with textContent:
// nothing a resident or LOCAL wrote is ever parsed as HTML.
"use strict";

const state = {
  config: null, last: 0, entries: [], resident: null, active: "resident", unread: {},
  richmenu: null, typingUntil: {}, sending: 0,
};

// ------------------------------------------------------------------------- DOM helpers
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  return node;
}
function $(id) { return document.getElementById(id); }

// ------------------------------------------------------------------------- server calls
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || String(response.status));
  return data;
}

async function send(chatId, request) {
  state.sending += 1;
  document.body.dataset.sending = String(state.sending);
  try {
    await api("/api/send", {chat: chatId, ...request});
  } catch (error) {
    notify(`送不出去：${error.message}`);
  } finally {
    state.sending -= 1;
    document.body.dataset.sending = String(state.sending);
    await poll();
  }
}

function chatOf(pane) { return pane === "staff" ? state.config.staff_group : state.resident; }

// ------------------------------------------------------------------------- actions (taps)
// What a tap does, as on a phone: postback/message/datetimepicker go to the server, which sends the
// signed event; location opens the picker; uri and the rest are described, never opened or fetched.
function tap(pane, action) {
  if (!action || typeof action !== "object") return;
  const chatId = chatOf(pane);
  switch (action.type) {
    case "postback": case "message": case "datetimepicker": {
      const kept = {type: action.type};
      for (const key of ["data", "displayText", "text", "mode"]) {
        if (typeof action[key] === "string") kept[key] = action[key];
      }
      if (action.type === "message" && typeof kept.text !== "string") kept.text = String(action.label || "");
      clearChips(pane);
      return send(chatId, {kind: "action", action: kept});
    }
    case "richmenuswitch":
      return send(chatId, {kind: "action", action: {type: "postback", data: String(action.data || "")}});
    case "location":
      if (pane === "staff") { notify("群組裡不能分享位置"); return; }
      return openLocation();
    case "uri":
      return notify(`手機會開啟連結：${String(action.uri || "")}（本機不開啟）`);
    case "clipboard":
      return notify(`手機會複製：${String(action.clipboardText || "")}`);
    default:
      return notify(`本機無法模擬「${String(action.type)}」動作`);
  }
}

function actionLabel(action, fallback) {
  return String(action.label || action.displayText || action.text || fallback || action.type || "按鈕");
}

// ------------------------------------------------------------------------- Flex Message
const SIZES = {xxs: 11, xs: 13, sm: 14, md: 16, lg: 19, xl: 22, xxl: 29, "3xl": 35, "4xl": 48, "5xl": 74};
const SPACES = {none: 0, xs: 2, sm: 4, md: 8, lg: 12, xl: 16, xxl: 20};
const IMAGE_SIZES = {xxs: 40, xs: 60, sm: 80, md: 100, lg: 120, xl: 140, xxl: 160, "3xl": 180, "4xl": 200, "5xl": 220};
function rem(px) { return `${px / 16}rem`; }
function length(value, table) {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" && value in table) return rem(table[value]);
  if (typeof value === "string" && /^\d+(\.\d+)?px$/.test(value)) return rem(parseFloat(value));
  if (typeof value === "string" && /^\d+(\.\d+)?%$/.test(value)) return value;
  return null;
}
function safeColor(value) {
  return typeof value === "string" && /^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/.test(value) ? value : null;
}

function flexMessage(pane, message) {
  const contents = message.contents || {};
  const card = el("div", "flex-card");
  card.setAttribute("role", "group");
  card.setAttribute("aria-roledescription", "卡片");
  card.setAttribute("aria-label", String(message.altText || "卡片"));
  if (contents.type === "carousel") {
    const row = el("div", "flex-carousel");
    for (const bubble of contents.contents || []) row.append(flexBubble(pane, bubble));
    card.append(row);
  } else {
    card.append(flexBubble(pane, contents));
  }
  return card;
}

function flexBubble(pane, bubble) {
  const node = el("div", `flex-bubble ${["nano", "micro", "deca", "hecto", "kilo", "mega", "giga"].includes(bubble.size) ? bubble.size : "mega"}`);
  if (bubble.direction === "rtl") node.dir = "rtl";
  const styles = bubble.styles || {};
  for (const block of ["header", "hero", "body", "footer"]) {
    const part = bubble[block];
    if (!part || typeof part !== "object") continue;
    const wrap = el("div", `flex-block ${block}`);
    const style = styles[block] || {};
    const bg = safeColor(style.backgroundColor);
    if (bg) wrap.style.backgroundColor = bg;
    if (style.separator) wrap.classList.add("separated");
    wrap.append(component(pane, part, "vertical"));
    if (part.type === "box") {
      // a block's own padding is the box's (LINE: paddingAll overrides the block's default)
      for (const key of ["paddingAll", "paddingTop", "paddingBottom", "paddingStart", "paddingEnd"]) {
        if (part[key] !== undefined) { wrap.style.padding = "0"; break; }
      }
    }
    node.append(wrap);
  }
  if (bubble.action) makeTappable(pane, node, bubble.action);
  return node;
}

function makeTappable(pane, node, action) {
  node.classList.add("fx-tappable");
  node.tabIndex = 0;
  node.setAttribute("role", "button");
  node.setAttribute("aria-label", actionLabel(action, node.textContent));
  node.addEventListener("click", (event) => { event.stopPropagation(); tap(pane, action); });
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") { event.preventDefault(); tap(pane, action); }
  });
}

// Place a child in its parent box: flex grow (horizontal children default 1, vertical 0), and the space
// before it: its own margin, else the parent's spacing (Flex Message: margin overrides spacing).
function place(node, child, parentLayout, index, spacing) {
  const horizontal = parentLayout !== "vertical";
  const defaultFlex = horizontal && child.type !== "separator" && child.type !== "icon" ? 1 : 0;
  const flex = Number.isInteger(child.flex) ? child.flex : defaultFlex;
  node.style.flex = horizontal ? (flex > 0 ? `${flex} 1 0` : "0 0 auto") : `${flex} 0 auto`;
  const margin = length(child.margin, SPACES) || (index > 0 ? spacing : null);
  if (margin) node.style[horizontal ? "marginInlineStart" : "marginTop"] = margin;
  if (child.position === "absolute") {
    node.style.position = "absolute";
    for (const side of ["top", "bottom", "start", "end"]) {
      const value = length(child[`offset${side[0].toUpperCase()}${side.slice(1)}`], SPACES);
      if (value) node.style[{start: "insetInlineStart", end: "insetInlineEnd"}[side] || side] = value;
    }
  } else if (child.position === "relative") {
    node.style.position = "relative";
  }
}

function component(pane, node, parentLayout) {
  const make = {box, text: flexText, button: flexButton, separator, image, filler, spacer, icon, video}[node.type];
  if (!make) return el("span", "", "");
  return make(pane, node, parentLayout);
}

function box(pane, node) {
  const layout = ["vertical", "horizontal", "baseline"].includes(node.layout) ? node.layout : "vertical";
  const out = el("div", `fx-box ${layout}`);
  const spacing = length(node.spacing, SPACES);
  (node.contents || []).forEach((child, index) => {
    if (!child || typeof child !== "object") return;
    const made = component(pane, child, layout);
    place(made, child, layout, index, spacing);
    out.append(made);
  });
  const bg = safeColor(node.backgroundColor);
  if (bg) out.style.backgroundColor = bg;
  const border = safeColor(node.borderColor);
  if (border) out.style.border = `${length(node.borderWidth, {none: 0, light: 0.5, normal: 1, medium: 2, "semi-bold": 3, bold: 4}) || rem(1)} solid ${border}`;
  const radius = length(node.cornerRadius, SPACES);
  if (radius) out.style.borderRadius = radius;
  const padding = {paddingAll: "padding", paddingTop: "paddingTop", paddingBottom: "paddingBottom",
    paddingStart: "paddingInlineStart", paddingEnd: "paddingInlineEnd"};
  for (const [key, css] of Object.entries(padding)) {
    const value = length(node[key], SPACES);
    if (value) out.style[css] = value;
  }
  for (const key of ["width", "maxWidth", "height", "maxHeight"]) {
    const value = length(node[key], {});
    if (value) out.style[key] = value;
  }
  const justify = {"flex-start": "flex-start", center: "center", "flex-end": "flex-end", "space-between": "space-between",
    "space-around": "space-around", "space-evenly": "space-evenly"};
  if (node.justifyContent in justify) out.style.justifyContent = justify[node.justifyContent];
  if (node.alignItems in justify) out.style.alignItems = justify[node.alignItems];
  if (node.action) makeTappable(pane, out, node.action);
  return out;
}

function textStyle(target, node) {
  const size = length(node.size, SIZES);
  if (size) target.style.fontSize = size;
  if (node.weight === "bold") target.style.fontWeight = "bold";
  const color = safeColor(node.color);
  if (color) target.style.color = color;
  if (node.style === "italic") target.style.fontStyle = "italic";
  if (node.decoration === "underline" || node.decoration === "line-through") target.style.textDecoration = node.decoration;
}

function flexText(pane, node) {
  const out = el("p", `fx-text${node.wrap ? " wrap" : ""}`);
  out.style.margin = "0";
  if (Array.isArray(node.contents) && node.contents.length) {
    for (const span of node.contents) {
      if (!span || span.type !== "span") continue;
      const part = el("span", "", span.text || "");
      textStyle(part, span);
      out.append(part);
    }
  } else {
    out.textContent = String(node.text || "");
  }
  textStyle(out, node);
  if (["start", "end", "center"].includes(node.align)) out.style.textAlign = node.align;
  if (node.gravity === "center") out.style.alignSelf = "center";
  if (node.gravity === "bottom") out.style.alignSelf = "flex-end";
  if (node.wrap && Number.isInteger(node.maxLines) && node.maxLines > 0) {
    out.style.display = "-webkit-box";
    out.style.webkitLineClamp = String(node.maxLines);
    out.style.webkitBoxOrient = "vertical";
    out.style.overflow = "hidden";
  }
  const spacing = length(node.lineSpacing, {});
  if (spacing) out.style.lineHeight = `calc(1.4em + ${spacing})`;
  if (node.action) makeTappable(pane, out, node.action);
  return out;
}

function flexButton(pane, node) {
  const action = node.action || {};
  const style = ["link", "primary", "secondary"].includes(node.style) ? node.style : "link";
  const out = el("button", `fx-button ${style} ${node.height === "sm" ? "sm" : "md"}`, actionLabel(action));
  out.type = "button";
  out.setAttribute("aria-label", actionLabel(action));
  const color = safeColor(node.color);
  if (color) out.style[style === "link" ? "color" : "backgroundColor"] = color;
  if (node.gravity === "center") out.style.alignSelf = "center";
  out.addEventListener("click", () => tap(pane, action));
  return out;
}

function separator(_pane, node, parentLayout) {
  const out = el("div", `fx-separator ${parentLayout === "vertical" ? "h" : "v"}`);
  out.setAttribute("role", "separator");
  const color = safeColor(node.color);
  if (color) out.style.backgroundColor = color;
  return out;
}

// Images are never fetched (no network from the page): a box of the image's proportions stands in.
function image(pane, node) {
  const out = el("div", "fx-image placeholder", "圖片");
  out.setAttribute("role", "img");
  out.setAttribute("aria-label", "圖片");
  const ratio = typeof node.aspectRatio === "string" && /^\d+(\.\d+)?:\d+(\.\d+)?$/.test(node.aspectRatio) ? node.aspectRatio : "1:1";
  const [w, h] = ratio.split(":").map(Number);
  out.style.aspectRatio = `${w} / ${h}`;
  const size = node.size === "full" ? "100%" : length(node.size, IMAGE_SIZES) || rem(100);
  out.style.width = size;
  out.style.maxWidth = "100%";
  if (node.align === "start") out.style.alignSelf = "flex-start";
  else if (node.align === "end") out.style.alignSelf = "flex-end";
  else out.style.alignSelf = "center";
  if (node.action) makeTappable(pane, out, node.action);
  return out;
}
function filler() { return el("div", "fx-filler"); }
function spacer(_pane, node) {
  const out = el("div", "fx-spacer");
  out.style.minHeight = length(node.size, SPACES) || rem(8);
  return out;
}
function icon(_pane, node) {
  const out = el("span", "fx-icon");
  out.setAttribute("aria-hidden", "true");
  const size = length(node.size, SIZES);
  if (size) { out.style.width = size; out.style.height = size; }
  return out;
}
function video(pane, node) { return node.altContent ? component(pane, node.altContent, "vertical") : el("div", "placeholder", "影片"); }

// ------------------------------------------------------------------------- templates and other messages
function templateMessage(pane, message) {
  const template = message.template || {};
  const columns = Array.isArray(template.columns) ? template.columns : [template];
  const card = el("div", "flex-card");
  card.setAttribute("role", "group");
  card.setAttribute("aria-roledescription", "卡片");
  card.setAttribute("aria-label", String(message.altText || "卡片"));
  const row = el("div", columns.length > 1 ? "flex-carousel" : "");
  for (const column of columns) {
    const node = el("div", `template-card ${template.type === "confirm" ? "confirm" : ""}`);
    if (column.title) node.append(el("div", "t-title", column.title));
    if (column.text) node.append(el("div", "t-text", column.text));
    const actions = el("div", "t-actions");
    for (const action of column.actions || (column.action ? [column.action] : [])) {
      const button = el("button", "", actionLabel(action));
      button.type = "button";
      button.addEventListener("click", () => tap(pane, action));
      actions.append(button);
    }
    node.append(actions);
    row.append(node);
  }
  card.append(row);
  return card;
}

function messageNode(pane, message) {
  switch (message.type) {
    case "text": case "textV2": return el("div", "bubble", message.text || "");
    case "flex": return flexMessage(pane, message);
    case "template": return templateMessage(pane, message);
    case "sticker": return el("div", "bubble", "［貼圖］");
    case "image": return el("div", "bubble placeholder", "［圖片］");
    case "video": return el("div", "bubble placeholder", "［影片］");
    case "audio": return el("div", "bubble", "［語音訊息］");
    case "location": return locationCard(message);
    default: return el("div", "bubble", `［${String(message.type)} 訊息］${String(message.altText || "")}`);
  }
}

// A location bubble: its title, then its address, else its coordinates (marked 彰化縣外 when the
// page's server found the point outside the county).
function locationCard(location) {
  const coordinates = `${Number(location.latitude).toFixed(4)}, ${Number(location.longitude).toFixed(4)}`;
  const where = location.address || (location.in_county === false ? `${coordinates}（彰化縣外）` : coordinates);
  const card = el("div", "location-card");
  card.setAttribute("role", "group");
  card.setAttribute("aria-label", `位置資訊：${location.title || ""} ${where}`.trim());
  const pin = el("div", "pin", "📍");
  pin.setAttribute("aria-hidden", "true");
  card.append(pin);
  const what = el("div", "what");
  what.append(el("strong", "", location.title || "位置資訊"));
  what.append(el("div", "", where));
  card.append(what);
  return card;
}

// The line a phone shows in a notification and in the chat list for a message.
function notificationLine(message) {
  if (message.type === "text" || message.type === "textV2") return String(message.text || "");
  if (message.altText) return String(message.altText);
  return `［${String(message.type)}］`;
}

// ------------------------------------------------------------------------- the timeline
function paneOf(chatId) { return chatId === state.config.staff_group ? "staff" : "resident"; }
function visible(chatId) { return chatId === state.config.staff_group || chatId === state.resident; }
function timeText(ms) { const d = new Date(ms); return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`; }

function entryNode(entry) {
  const pane = paneOf(entry.chat);
  if (entry.from === "system") {
    const row = el("div", "row system");
    row.append(el("div", "bubble", entry.text));
    return row;
  }
  if (entry.from === "user") {
    const row = el("div", "row mine");
    row.dataset.from = "user";
    row.append(el("span", "time", timeText(entry.at_ms)));
    const stack = el("div", "stack");
    if (entry.location) stack.append(locationCard(entry.location));
    else stack.append(el("div", "bubble", entry.text));
    row.append(stack);
    return row;
  }
  const row = el("div", "row bot");
  row.dataset.from = "bot";
  const avatar = el("div", "avatar", "LOCAL");
  avatar.setAttribute("aria-hidden", "true");
  row.append(avatar);
  const stack = el("div", "stack");
  stack.append(el("span", "sender", entry.kind === "push" ? "彰化在地小幫手（推播）" : "彰化在地小幫手"));
  for (const message of entry.messages || []) stack.append(messageNode(pane, message));
  row.append(stack);
  row.append(el("span", "time", timeText(entry.at_ms)));
  return row;
}

function renderChat(pane) {
  const chatId = chatOf(pane);
  const log = $(`${pane}-log`);
  log.replaceChildren();
  for (const entry of state.entries) {
    if (entry.chat === chatId && entry.from !== "loading") log.append(entryNode(entry));
  }
  log.scrollTop = log.scrollHeight;
  renderChips(pane);
  renderTyping(pane);
}

// Quick replies: the chips of the chat's last message, while nothing came after it.
function renderChips(pane) {
  const chatId = chatOf(pane);
  const chips = $(`${pane}-chips`);
  chips.replaceChildren();
  const shown = state.entries.filter((e) => e.chat === chatId && e.from !== "loading" && e.from !== "system");
  const last = shown[shown.length - 1];
  if (!last || last.from !== "bot") return;
  const message = (last.messages || [])[last.messages.length - 1] || {};
  for (const item of ((message.quickReply || {}).items || [])) {
    const action = item.action || {};
    const chip = el("button", "chip", action.type === "location" && !action.label ? "傳送位置" : actionLabel(action));
    chip.type = "button";
    chip.setAttribute("aria-label", `快速回覆：${chip.textContent}`);
    chip.addEventListener("click", () => tap(pane, action));
    chips.append(chip);
  }
}
function clearChips(pane) { $(`${pane}-chips`).replaceChildren(); }

function renderTyping(pane) {
  const until = state.typingUntil[chatOf(pane)] || 0;
  $(`${pane}-typing`).hidden = Date.now() >= until;
}

function renderTabs() {
  const tabs = $("resident-tabs");
  tabs.replaceChildren();
  for (const resident of state.config.residents) {
    const button = el("button", "", resident.name);
    button.type = "button";
    button.setAttribute("role", "tab");
    button.setAttribute("aria-selected", String(resident.id === state.resident));
    button.dataset.user = resident.id;
    const count = state.unread[resident.id] || 0;
    if (count) {
      const badge = el("span", "badge", count);
      badge.setAttribute("aria-label", `${count} 則未讀`);
      button.append(badge);
    }
    button.addEventListener("click", () => switchResident(resident.id));
    tabs.append(button);
  }
  const name = state.config.residents.find((r) => r.id === state.resident).name;
  $("resident-title").textContent = `${name} 的一對一聊天`;
  $("resident-log").setAttribute("aria-label", `${name} 的聊天紀錄`);
}

function switchResident(userId) {
  state.resident = userId;
  state.unread[userId] = 0;
  renderTabs();
  renderChat("resident");
  loadRichMenu();
}

function notify(text) { $("notification").textContent = text; }

function take(entries) {
  const touched = new Set();
  for (const entry of entries) {
    state.entries.push(entry);
    state.last = Math.max(state.last, entry.id);
    if (entry.from === "loading") {
      state.typingUntil[entry.chat] = entry.at_ms + 1000 * Number(entry.seconds || 20);
    } else if (entry.from === "bot") {
      state.typingUntil[entry.chat] = 0;  // a message ends the loading animation, as in LINE
      const line = notificationLine((entry.messages || [])[0] || {});
      const who = entry.chat === state.config.staff_group ? "工作人員群組"
        : (state.config.residents.find((r) => r.id === entry.chat) || {}).name;
      notify(`${who}：${line}`);
      if (!visible(entry.chat)) state.unread[entry.chat] = (state.unread[entry.chat] || 0) + 1;
    }
    touched.add(entry.chat);
  }
  for (const chatId of touched) if (visible(chatId)) renderChat(paneOf(chatId));
  if ([...touched].some((c) => !visible(c))) renderTabs();
}

let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    const data = await api(`/api/timeline?since=${state.last}`);
    take(data.entries || []);
  } catch (error) {
    notify(`讀不到聊天紀錄：${error.message}`);
  } finally {
    polling = false;
    renderTyping("resident");
    renderTyping("staff");
  }
}

// ------------------------------------------------------------------------- the rich menu
async function loadRichMenu() {
  const wrap = $("richmenu");
  const areas = $("richmenu-areas");
  let data;
  try { data = await api(`/api/richmenu?user=${encodeURIComponent(state.resident)}`); } catch (_error) { data = {richmenu: null}; }
  areas.replaceChildren();
  state.richmenu = data.richmenu;
  if (!data.richmenu) { wrap.hidden = true; return; }
  const menu = data.richmenu;
  const size = menu.size || {width: 2500, height: 1686};
  const picture = document.createElement("img");
  picture.alt = "";  // the areas below carry the labels
  picture.addEventListener("error", () => { picture.remove(); areas.classList.add("no-image"); });
  areas.classList.remove("no-image");
  const ratio = (Number(size.width) || 2500) / (Number(size.height) || 1686);
  areas.style.aspectRatio = String(ratio);
  areas.style.maxWidth = `calc(36vh * ${ratio})`;  // the chat keeps most of a short screen, as in LINE
  picture.src = data.image;
  areas.append(picture);
  for (const area of menu.areas || []) {
    const bounds = area.bounds || {};
    const action = area.action || {};
    const button = el("button", "area", actionLabel(action, "選單區塊"));
    button.type = "button";
    button.setAttribute("aria-label", `選單：${actionLabel(action, "選單區塊")}`);
    button.style.left = `${100 * Number(bounds.x || 0) / size.width}%`;
    button.style.top = `${100 * Number(bounds.y || 0) / size.height}%`;
    button.style.width = `${100 * Number(bounds.width || 0) / size.width}%`;
    button.style.height = `${100 * Number(bounds.height || 0) / size.height}%`;
    button.addEventListener("click", () => tap("resident", action));
    areas.append(button);
  }
  areas.hidden = state.menuOpen === undefined ? menu.selected === false : !state.menuOpen;  // as the person left it
  showMenuBar();
  wrap.hidden = false;
}

// The chat bar says what a tap on it does: open (the menu's own chatBarText when it says so) or close.
function showMenuBar() {
  const open = !$("richmenu-areas").hidden;
  const barText = String((state.richmenu || {}).chatBarText || "");
  $("richmenu-bar").textContent = open ? "收起選單" : (barText.includes("開") ? barText : "打開選單");
  $("richmenu-bar").setAttribute("aria-expanded", String(open));
}

// ------------------------------------------------------------------------- the location picker
const BOUNDS = {north: 24.2, south: 23.78, west: 120.28, east: 120.68};
const MAP = {width: 400, height: 420};
function project(lat, lng) {
  return [MAP.width * (lng - BOUNDS.west) / (BOUNDS.east - BOUNDS.west),
    MAP.height * (BOUNDS.north - lat) / (BOUNDS.north - BOUNDS.south)];
}

function buildMap() {
  const map = svg("svg", {viewBox: `0 0 ${MAP.width} ${MAP.height}`, role: "group", "aria-label": "彰化縣各鄉鎮（點選一個）"});
  // the county's rough outline: the hull of the township points, widened
  const points = state.config.townships.map((t) => project(t.latitude, t.longitude));
  const hull = convexHull(points);
  const cx = points.reduce((s, p) => s + p[0], 0) / points.length;
  const cy = points.reduce((s, p) => s + p[1], 0) / points.length;
  const outline = hull.map(([x, y]) => [cx + (x - cx) * 1.12, cy + (y - cy) * 1.12]);
  map.append(svg("polygon", {points: outline.map((p) => p.join(",")).join(" "), fill: "#d8e9c9", stroke: "#8fae78", "stroke-width": 2}));
  const pin = svg("circle", {r: 7, class: "pin", cx: -20, cy: -20});
  map.addEventListener("click", (event) => {
    const box = map.getBoundingClientRect();
    const x = (event.clientX - box.left) * MAP.width / box.width;
    const y = (event.clientY - box.top) * MAP.height / box.height;
    if (event.target.closest(".town")) return;
    const lat = BOUNDS.north - y * (BOUNDS.north - BOUNDS.south) / MAP.height;
    const lng = BOUNDS.west + x * (BOUNDS.east - BOUNDS.west) / MAP.width;
    choosePoint(lat, lng, "");
  });
  for (const town of state.config.townships) {
    const [x, y] = project(town.latitude, town.longitude);
    const group = svg("g", {class: "town", tabindex: 0, role: "button", "aria-label": town.name, "data-name": town.name});
    group.append(svg("circle", {cx: x, cy: y, r: 5}));
    const label = svg("text", {x: x + 7, y: y + 4});
    label.textContent = town.name;
    group.append(label);
    const choose = () => {
      for (const other of map.querySelectorAll(".town.chosen")) other.classList.remove("chosen");
      group.classList.add("chosen");
      choosePoint(town.latitude, town.longitude, town.name);
    };
    group.addEventListener("click", choose);
    group.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(); } });
    map.append(group);
  }
  map.append(pin);
  $("location-map").append(map);
  state.pin = pin;
}

function convexHull(points) {
  const sorted = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [];
  for (const p of sorted) { while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], p) <= 0) lower.pop(); lower.push(p); }
  const upper = [];
  for (const p of sorted.reverse()) { while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], p) <= 0) upper.pop(); upper.push(p); }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

function choosePoint(lat, lng, name) {
  $("location-lat").value = lat.toFixed(5);
  $("location-lng").value = lng.toFixed(5);
  $("location-title-input").value = name;
  const [x, y] = project(lat, lng);
  state.pin.setAttribute("cx", x);
  state.pin.setAttribute("cy", y);
}

function openLocation() {
  $("location-error").textContent = "";
  $("location-dialog").showModal();
}

function shareLocation(event) {
  event.preventDefault();
  const lat = Number($("location-lat").value);
  const lng = Number($("location-lng").value);
  if (!Number.isFinite(lat) || !Number.isFinite(lng) || Math.abs(lat) > 90 || Math.abs(lng) > 180 || $("location-lat").value === "") {
    $("location-error").textContent = "請選一個鄉鎮，或輸入正確的緯度（-90～90）和經度（-180～180）";
    return;
  }
  const title = $("location-title-input").value.trim();
  $("location-dialog").close();
  // the page's server names the point (a township's own point only, never a Changhua place outside the county)
  send(state.resident, {kind: "location", latitude: lat, longitude: lng, title});
}

// ------------------------------------------------------------------------- start
// LINE's limit for one text message: 5,000 characters counted in UTF-16 code units, which is what a
// JavaScript string's length counts (Messaging API reference, "Text message"; shared/line/limits.py).
const MAX_TEXT_UNITS = 5000;

// The note under the box: shown while the text is over LINE's limit (such a text is never sent).
function checkLength(pane) {
  const units = $(`${pane}-input`).value.length;
  const note = $(`${pane}-limit`);
  const over = units > MAX_TEXT_UNITS;
  note.hidden = !over;
  note.textContent = over ? `這則以 LINE 的算法有 ${units.toLocaleString("en-US")} 字，超過每則 5,000 字的上限，`
    + "LINE 不會收下，所以沒有送出；請刪短或分成幾則。" : "";
  $(`${pane}-input`).setAttribute("aria-invalid", String(over));
  return !over;
}

function composer(pane) {
  $(`${pane}-input`).addEventListener("input", () => checkLength(pane));
  $(`${pane}-form`).addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $(`${pane}-input`);
    const text = input.value;
    if (!text.trim()) return;
    if (!checkLength(pane)) { input.focus(); return; }  // kept in the box, the note says why
    input.value = "";
    clearChips(pane);
    send(chatOf(pane), {kind: "text", text});
  });
}

function showPane(pane) {
  state.active = pane;
  for (const p of ["resident", "staff"]) $(`${p}-phone`).classList.toggle("active", p === pane);
  $("switch-pane").textContent = pane === "staff" ? "切換到住民聊天" : "切換到工作人員群組";
}

function setLayout(single) {
  document.body.classList.toggle("single", single);
  $("layout").setAttribute("aria-pressed", String(single));
  $("layout").textContent = single ? "兩個聊天室並排" : "只看一個聊天室";
  $("switch-pane").hidden = !single || !state.config.staff_group;
  showPane(state.active);
}

async function start() {
  state.config = await api("/api/config");
  state.resident = state.config.residents[0].id;
  if (!state.config.staff_group) $("staff-phone").hidden = true;
  renderTabs();
  composer("resident");
  composer("staff");
  $("resident-location").addEventListener("click", openLocation);
  $("location-form").addEventListener("submit", shareLocation);
  $("location-cancel").addEventListener("click", () => $("location-dialog").close());
  $("large-text").addEventListener("click", () => {
    const on = document.documentElement.classList.toggle("large-text");
    $("large-text").setAttribute("aria-pressed", String(on));
  });
  $("layout").addEventListener("click", () => setLayout(!document.body.classList.contains("single")));
  $("switch-pane").addEventListener("click", () => showPane(state.active === "staff" ? "resident" : "staff"));
  for (const pane of ["resident", "staff"]) {
    $(`${pane}-phone`).addEventListener("focusin", () => { if (!document.body.classList.contains("single")) showPane(pane); });
  }
  $("richmenu-bar").addEventListener("click", () => {
    const areas = $("richmenu-areas");
    areas.hidden = !areas.hidden;
    state.menuOpen = !areas.hidden;
    showMenuBar();
  });
  buildMap();
  renderChat("resident");
  renderChat("staff");
  await poll();
  await loadRichMenu();
  document.body.dataset.ready = "1";
  setInterval(poll, 700);
}

document.addEventListener("DOMContentLoaded", () => { start().catch((error) => notify(`無法啟動：${error.message}`)); });
