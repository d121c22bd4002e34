// The Aulos panel: reads the status WebSocket, draws the rig's parts from /api/parts, and sends every
// change as a control request (POST /api/control) with the session's CSRF token. No framework, no build.
"use strict";

const $ = (selector) => document.querySelector(selector);
let csrf = null;
let parts = null;       // the last /api/parts answer
let activeRig = -1;
let partsLoading = false;
let fonts = null;       // the last `fonts` answer: SoundFonts found, their presets, the parts playing them

function showError(text) {
  const box = $("#error");
  box.textContent = text || "";
  box.hidden = !text;
}

async function call(method, path, body, type = "application/json") {
  const headers = { "X-Aulos-CSRF": csrf || "" };
  if (body !== undefined) headers["Content-Type"] = type;
  const response = await fetch(path, { method, headers, body, credentials: "same-origin" });
  const text = await response.text();
  let answer;
  try { answer = JSON.parse(text); } catch { answer = { text }; }
  if (!response.ok) throw new Error(answer.error || `${response.status} ${response.statusText}`);
  return answer;
}

const control = (request) => call("POST", "/api/control", JSON.stringify({ request }));

// A name in a request line: in double quotes when it holds a space (a part called "Left Hand"), as the
// control socket reads it (docs/service.md).
const quoted = (name) => /[\s"\\]/.test(name) ? `"${name.replace(/[\\"]/g, (c) => "\\" + c)}"` : name;

async function act(request) {
  try { const answer = await control(request); showError(""); return answer; }
  catch (error) { showError(error.message); return null; }
}

// MARK: Parts

function controlRow(item, label) {
  const row = document.createElement("div");
  row.className = "control";
  const name = document.createElement("span");
  name.textContent = label;
  let input;
  if (item.isEQ) {
    input = document.createElement("select");
    parts.eqPresets.forEach((preset, index) => input.add(new Option(preset, index)));
    input.value = Math.round(item.value);
    input.addEventListener("change", () => act(`set ${quoted(item.target)} ${input.value}`));
  } else {
    input = document.createElement("input");
    input.type = "range";
    input.min = item.min;
    input.max = item.max;
    input.step = (item.max - item.min) / 1000;
    input.value = item.value;
    input.addEventListener("input", () => {
      output.value = Number(input.value).toFixed(2);
      act(`set ${quoted(item.target)} ${input.value}`);
    });
  }
  input.dataset.target = item.target;
  input.setAttribute("aria-label", item.target);
  const output = document.createElement("output");
  output.value = item.isEQ ? "" : Number(item.value).toFixed(2);
  const learn = document.createElement("button");
  learn.className = "learn";
  learn.textContent = "learn";
  learn.title = `MIDI-learn ${item.target}: move a controller next`;
  learn.addEventListener("click", () => act(`learn ${quoted(item.target)} 30`));
  row.append(name, input, output, learn);
  return row;
}

// A part's presets: its font's (a sampler), the synth's or an LV2 plugin's by name, else bank and program
// numbers; for a part on several channels, a channel menu saying what each plays. The menus follow what the
// channel plays (status.programs), whatever changed it.
function presetRow(group) {
  const row = document.createElement("div");
  row.className = "row presets";
  const font = (fonts || []).find((entry) => entry.parts.includes(group.name));
  const offered = font && font.presets.length ? font.presets : group.presets || [];
  const names = new Map(offered.map((preset) => [`${preset.bank} ${preset.program}`, preset.name]));
  const channel = document.createElement("select");
  channel.dataset.channels = group.name;
  channel.setAttribute("aria-label", `${group.name} channel`);
  for (const number of group.channels) channel.add(new Option(`ch ${number}`, number));
  let menu;
  if (offered.length) {
    menu = document.createElement("select");
    menu.dataset.presets = group.name;
    menu.setAttribute("aria-label", `${group.name} preset`);
    const sorted = [...offered].sort((a, b) => a.bank - b.bank || a.program - b.program);
    for (const preset of sorted) {
      menu.add(new Option(`${preset.bank}:${preset.program} ${preset.name}`, `${preset.bank} ${preset.program}`));
    }
    menu.addEventListener("change", () => act(`preset ${quoted(group.name)} ${menu.value} ${channel.value}`));
    row.append(channel, menu);
  } else {
    const field = (title, max) => {
      const input = Object.assign(document.createElement("input"), { type: "number", min: 0, max, value: 0, title });
      const label = document.createElement("label");
      label.append(title, input);
      return [label, input];
    };
    const [bankLabel, bank] = field("bank", 16383);
    const [programLabel, program] = field("program", 127);
    const choose = Object.assign(document.createElement("button"), { textContent: "Preset" });
    choose.addEventListener("click", () =>
      act(`preset ${quoted(group.name)} ${bank.value} ${program.value} ${channel.value}`));
    menu = { bank, program };
    row.append(channel, bankLabel, programLabel, choose);
  }
  channel.hidden = group.channels.length < 2;
  // What each channel plays, from the part's list then each status.
  let playing = new Map(group.programs.map((entry) => [entry.channel, entry]));
  const show = () => {
    for (const option of channel.options) {
      const entry = playing.get(Number(option.value));
      const name = entry && (names.get(`${entry.bank} ${entry.program}`) || `${entry.bank}:${entry.program}`);
      option.textContent = `ch ${option.value}${name ? " · " + name : ""}`;
    }
    const entry = playing.get(Number(channel.value));
    const busy = (element) => element === document.activeElement;
    if (menu instanceof HTMLSelectElement) {
      if (busy(menu)) return;
      const value = entry ? `${entry.bank} ${entry.program}` : "";
      if (!names.has(value) && entry) {
        menu.querySelector("option[data-unlisted]")?.remove();
        const unlisted = new Option(`${entry.bank}:${entry.program} (not in the list)`, value);
        unlisted.dataset.unlisted = "";
        menu.add(unlisted, 0);
      }
      menu.value = value;
    } else if (entry && !busy(menu.bank) && !busy(menu.program)) {
      menu.bank.value = entry.bank;
      menu.program.value = entry.program;
    }
  };
  channel.addEventListener("change", show);
  row.follow = (programs) => {
    const fresh = new Map(programs.filter((entry) => entry.part === group.name).map((entry) => [entry.channel, entry]));
    if (JSON.stringify([...fresh]) === JSON.stringify([...playing])) return;
    playing = fresh;
    show();
  };
  show();
  return row;
}

function partCard(group) {
  const card = document.createElement("article");
  card.className = "part";
  card.dataset.part = group.name;
  const title = document.createElement("h3");
  title.textContent = group.name;
  const detail = document.createElement("small");
  detail.textContent = group.kind === "part"
    ? `${group.instrument} · ch ${group.channels.join(",")}` : group.kind;
  title.append(detail);
  if (group.kind === "part") {
    // The part's CPU load (status.cpu), filled in by every status push.
    const cpu = document.createElement("small");
    cpu.className = "cpu";
    cpu.dataset.cpuPart = group.name;
    title.append(cpu);
  }
  card.append(title);
  const byName = (suffix) => group.controls.find((item) => item.target.toLowerCase().endsWith("." + suffix));
  const main = ["volume", "level", "pan"].map(byName).filter(Boolean);
  const sends = group.controls.filter((item) => item.target.toLowerCase().includes(".send-"));
  const eq = byName("eq");
  if (group.kind === "part") {
    const row = document.createElement("div");
    row.className = "row";
    const enabled = byName("enabled");
    const mute = document.createElement("button");
    mute.textContent = "Mute";
    mute.dataset.mute = group.name;
    if (enabled && enabled.value < 0.5) mute.classList.add("on");
    mute.addEventListener("click", async () => {
      const muted = !mute.classList.contains("on");
      if (await act(`set ${quoted(group.name + ".enabled")} ${muted ? 0 : 1}`)) mute.classList.toggle("on", muted);
    });
    const solo = document.createElement("button");
    solo.textContent = "Solo";
    solo.dataset.solo = group.name;
    solo.addEventListener("click", () => soloPart(group.name, solo));
    row.append(mute, solo);
    card.append(row);
    card.append(presetRow(group));
  }
  for (const item of main) card.append(controlRow(item, item.target.split(".").pop()));
  for (const item of sends) card.append(controlRow(item, item.target.split(".").pop()));
  if (eq) card.append(controlRow(eq, "eq"));
  const rest = group.controls.filter((item) => !main.includes(item) && !sends.includes(item) && item !== eq
    && !item.target.toLowerCase().endsWith(".enabled"));
  if (rest.length) {
    const more = document.createElement("details");
    const summary = document.createElement("summary");
    summary.textContent = `${rest.length} more parameters`;
    more.append(summary);
    for (const item of rest) more.append(controlRow(item, item.target.split(".").pop()));
    card.append(more);
  }
  return card;
}

async function soloPart(name, button) {
  const soloing = !button.classList.contains("on");
  for (const group of parts.groups.filter((group) => group.kind === "part")) {
    const on = !soloing || group.name === name;
    await act(`set ${quoted(group.name + ".enabled")} ${on ? 1 : 0}`);
    document.querySelector(`[data-mute="${group.name}"]`)?.classList.toggle("on", !on);
    document.querySelector(`[data-solo="${group.name}"]`)?.classList.toggle("on", soloing && group.name === name);
  }
}

async function loadParts() {
  if (partsLoading) return;   // status pushes arrive every 50 ms; one fetch at a time
  partsLoading = true;
  try {
    parts = await call("GET", "/api/parts");
    fonts = (await control("fonts")).fonts;
  } catch (error) { showError(error.message); return; }
  finally { partsLoading = false; }
  activeRig = parts.activeRig;
  const select = $("#rig-select");
  select.replaceChildren(...parts.rigs.map((name, index) => new Option(`${index + 1} ${name}`, index + 1)));
  select.value = parts.activeRig + 1;
  $("#parts").replaceChildren(...parts.groups.map(partCard));
  // The rig's snapshots: choosing one recalls it (values glide; the sliders follow at once).
  const snapshots = parts.snapshots || [];
  $("#snapshot").hidden = snapshots.length === 0;
  $("#snapshot").replaceChildren(new Option("Snapshot…", ""), ...snapshots.map((name) => new Option(name, name)));
  $("#fonts").replaceChildren(...fonts.map((font) => {
    const item = document.createElement("li");
    const used = font.parts.length ? ` — played by ${font.parts.join(", ")}` : "";
    item.textContent = `${font.path}: ${font.presets.length} presets${used}`;
    return item;
  }));
}

// Values changed elsewhere (OSC, a controller, another panel) reach the sliders every 3 s while the page
// is visible; the control under the user's finger or focus is left alone.
async function refreshValues() {
  if (document.hidden || !parts) return;
  let fresh;
  try { fresh = await call("GET", "/api/parts"); } catch { return; }
  if (fresh.activeRig !== parts.activeRig) return;   // a rig switch redraws everything anyway
  for (const group of fresh.groups) {
    for (const item of group.controls) {
      const input = document.querySelector(`[data-target="${CSS.escape(item.target)}"]`);
      if (!input || input === document.activeElement || input.matches(":active")) continue;
      input.value = item.isEQ ? Math.round(item.value) : item.value;
      const output = input.parentElement.querySelector("output");
      if (output && !item.isEQ) output.value = Number(item.value).toFixed(2);
    }
  }
}

// MARK: Status

function meterRow(meter) {
  const row = document.createElement("div");
  row.className = "meter";
  const toWidth = (db) => `${Math.max(0, Math.min(100, (db + 60) / 60 * 100))}%`;
  row.innerHTML = '<span></span><span class="bar"><span class="avg"></span><span class="peak"></span></span><span></span>';
  row.children[0].textContent = meter.name;
  row.querySelector(".avg").style.width = toWidth(meter.average);
  row.querySelector(".peak").style.left = toWidth(meter.peak);
  row.querySelector(".peak").classList.toggle("silent", meter.peak <= -60);
  row.children[2].textContent = meter.peak > -120 ? `${meter.peak.toFixed(1)} dB` : "–";
  return row;
}

// Network MIDI sessions, one line each: who, where, how the packets fare. Absent without network MIDI. Names come
// from the network: set as text, never as HTML.
function showNetworkSessions(sessions) {
  $("#status-network-row").hidden = !sessions;
  if (!sessions) return;
  const ms = (value) => (typeof value === "number" ? `${value.toFixed(1)} ms` : null);
  const lines = sessions.map((session) => {
    const parts = [`${session.peer} (${session.kind} ${session.address})`,
      `${session.packets} packets, ${session.lost} lost, ${session.repaired} repaired`];
    if (ms(session.latencyMs)) parts.push(`latency ${ms(session.latencyMs)}`);
    if (ms(session.clockRoundTripMs)) parts.push(`clock round trip ${ms(session.clockRoundTripMs)}`);
    const line = Object.assign(document.createElement("div"), { className: "network-session" });
    line.textContent = parts.join(" · ");
    return line;
  });
  $("#status-network").replaceChildren(...(lines.length ? lines : [document.createTextNode("no sessions")]));
}

let lastMIDI = 0;
let sampleRate = 48000;
function showStatus(message) {
  const status = message.status;
  if (!status || status.error) return;
  $("#status-rig").textContent = `${status.activeRig + 1} ${status.rig}`;
  $("#status-device").textContent = `${status.device} · ${status.period}×${status.periods} @ ${status.sampleRate} Hz`;
  $("#status-dsp").textContent = `${(status.dspLoad * 100).toFixed(1)} % (peak ${(status.peakLoad * 100).toFixed(1)} %)`;
  $("#status-xruns").textContent = `${status.xruns} (late ${status.lateSlices})`;
  $("#status-voices").textContent = `${status.voices}`;
  $("#status-midi").textContent = `${status.midiDelivered} (late ${status.midiLate})`;
  $("#status-keyboards").textContent = status.keyboards ? (status.keyboards.join(", ") || "none") : "no sequencer";
  $("#status-learning").textContent = status.learning || (status.controls.length ? `${status.controls.length} mapped` : "–");
  showNetworkSessions(status.networkSessions);
  sampleRate = status.sampleRate;
  // What the player must know: the last good rig playing instead of the configured one, a reload that failed,
  // a unit that hangs, what the rig's sounds warn of.
  const alerts = [status.fallback, status.stuckUnit, status.reloadFailure && `Last reload failed, rig unchanged: ${status.reloadFailure}`]
    .concat(status.warnings || []).filter(Boolean);
  if ($("#alerts").dataset.shown !== JSON.stringify(alerts)) {
    $("#alerts").dataset.shown = JSON.stringify(alerts);
    $("#alerts").replaceChildren(...alerts.map((text) => Object.assign(document.createElement("li"), { textContent: text })));
    $("#alerts").hidden = alerts.length === 0;
  }
  $("#record").classList.toggle("on", Boolean(status.recordingTo));
  $("#record").setAttribute("aria-pressed", String(Boolean(status.recordingTo)));
  if (status.recordingTo) $("#record-state").textContent = `recording ${status.recordingTo}`;
  // A full disk stops the take while the button still shows it on: say so until the next one starts.
  if (status.recordingFailure) $("#record-state").textContent = status.recordingFailure;
  // The meters of this rig: its parts, its returns and the sends to them, the master (not the set's other rigs'
  // parts and returns). A part whose name another rig's part shares is metered as "part NAME (RIG)".
  const own = new Set((parts?.groups || []).filter((group) => group.kind === "part")
    .flatMap((group) => [`part ${group.name}`, `part ${group.name} (${status.rig})`]));
  for (const group of (parts?.groups || []).filter((group) => group.kind === "return")) {
    own.add(`send ${group.name}`).add(`return ${group.name}`);
  }
  const shown = (status.meters || []).filter((meter) => !/^(part|send|return) /.test(meter.name) || own.has(meter.name));
  $("#meters").replaceChildren(...shown.map(meterRow));
  showCPU(status);
  showPlayer(status.player);
  const snapshotTitle = $("#snapshot").options[0];
  if (snapshotTitle) snapshotTitle.textContent = status.snapshot ? `Snapshot: ${status.snapshot}` : "Snapshot…";
  if (status.activeRig !== activeRig) loadParts();   // a program change switched rigs
  else for (const row of document.querySelectorAll(".presets")) row.follow(status.programs || []);
  // The tempo the music plays at, unless the user is typing one.
  if (status.transportTempo && document.activeElement !== $("#tempo")) {
    $("#tempo").value = Math.round(status.transportTempo * 100) / 100;
  }
  for (const entry of status.recentMIDI || []) {
    if (entry.sequence <= lastMIDI) continue;
    lastMIDI = entry.sequence;
    const item = document.createElement("li");
    item.textContent = entry.text;
    $("#midi-log").prepend(item);
  }
  while ($("#midi-log").children.length > 50) $("#midi-log").lastChild.remove();
}

// Each part card's CPU load (its instrument, effects and EQ as a share of the period), and in the rig menu the
// rigs a switch to which may not fit the period: their parts' peak the last time they played on top of what
// plays now passes 90 % (a measurement of the past, not a guarantee).
const percent = (load) => `${(load * 100).toFixed(1)} %`;
function showCPU(status) {
  const parts = (status.cpu?.parts || []).filter((entry) => entry.rig === status.activeRig);
  // An SFZ part streams from disk: its underruns (voices that played silence because the disk was late) are
  // shown beside its CPU, the bytes in the tooltip.
  const streams = (status.sampleStreaming || []).filter((entry) => entry.rig === status.activeRig);
  const megabytes = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
  for (const label of document.querySelectorAll(".part .cpu")) {
    const entry = parts.find((part) => part.part === label.dataset.cpuPart);
    const stream = streams.find((part) => part.part === label.dataset.cpuPart);
    const late = stream?.underruns ? ` · ${stream.underruns} underruns` : "";
    label.textContent = (entry ? `CPU ${percent(entry.cpu)}` : "") + late;
    label.title = stream ? `streamed ${megabytes(stream.streamedBytes)} from disk, ${megabytes(stream.preloadedBytes)} `
      + `preloaded, ${stream.underruns} underruns (${stream.lateFrames} frames of silence)` : "";
  }
  const options = $("#rig-select").options;
  (status.rigLoads || []).forEach((load, index) => {
    const option = options[index];
    if (!option) return;
    // The rig playing is not marked: the warning is about switching to a rig.
    const warn = load.fits === false && index !== status.activeRig;
    const text = `${index + 1} ${load.name}${warn ? " ⚠ may not fit" : ""}`;
    if (option.textContent !== text) option.textContent = text;
    option.title = !load.measured ? "not yet measured"
      : `its parts took ${percent(load.peak)} at their peak when it last played; about ${percent(load.predicted)} predicted`;
  });
}

// The file player (aulos play FILE with the panel): the file, where it is, play/pause/stop, a position
// slider that locates, loop. The slider is left alone while the user drags it.
const clock = (seconds) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, "0")}`;
function showPlayer(player) {
  $("#player").hidden = !player;
  if (!player) return;
  $("#player-file").textContent = `${player.file.split("/").pop()} · ${player.state}`;
  $("#player-time").value = `${clock(player.position)} / ${clock(player.duration)}`;
  const slider = $("#player-position");
  slider.max = player.duration;
  if (document.activeElement !== slider) slider.value = player.position;
  $("#player-loop").checked = player.loop;
  // A playlist: its songs in a menu (rebuilt only when the list changes), the one loaded chosen.
  const songs = player.playlist || [];
  for (const id of ["#player-songs", "#player-previous", "#player-next"]) $(id).hidden = songs.length === 0;
  const menu = $("#player-song");
  const names = songs.map((name) => name.replace(/\.[^.]+$/, ""));
  if (menu.dataset.songs !== JSON.stringify(names)) {
    menu.replaceChildren(...names.map((name, index) => new Option(`${index + 1}. ${name}`, String(index + 1))));
    menu.dataset.songs = JSON.stringify(names);
  }
  if (player.song && document.activeElement !== menu) menu.value = String(player.song);
}

function connect() {
  const socket = new WebSocket(`ws://${location.host}/api/status`);
  socket.onopen = () => { $("#connection").textContent = "live"; $("#connection").classList.add("live"); };
  socket.onmessage = (event) => showStatus(JSON.parse(event.data));
  socket.onclose = () => {
    $("#connection").textContent = "reconnecting…";
    $("#connection").classList.remove("live");
    setTimeout(connect, 1000);
  };
}

// MARK: Rig file

async function uploadRig(text) {
  try {
    await call("PUT", "/api/rig-file", text, "application/yaml");
    showError("");
    setTimeout(loadParts, 1500);   // the rig is rebuilt on the control thread's next ticks
    return true;
  } catch (error) {
    showError(error.message);
    return false;
  }
}

async function loadRigFiles() {
  try {
    const answer = await call("GET", "/api/rig-files");
    $("#rig-files").replaceChildren(...answer.files.map((name) => new Option(name, name)));
    $("#rig-files").value = answer.playing;
  } catch (error) { showError(error.message); }
}

async function rigFileAction(action, name) {
  try {
    const answer = await call("POST", `/api/rig-files/${action}`, JSON.stringify({ name }));
    showError("");
    if (action === "load") setTimeout(loadParts, 1500);
    loadRigFiles();
    return answer;
  } catch (error) { showError(error.message); return null; }
}

// MARK: Start

async function start() {
  const session = await call("GET", "/api/session");
  if (session.passwordRequired && !session.loggedIn) {
    $("#login").hidden = false;
    $("#login").addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        csrf = (await call("POST", "/api/login", JSON.stringify({ password: $("#password").value }))).csrf;
        $("#login").hidden = true;
        showError("");
        begin();
      } catch (error) { showError(error.message); }
    });
    return;
  }
  csrf = session.csrf;
  begin();
}

function begin() {
  $("#panel").hidden = false;
  $("#rig-select").addEventListener("change", async (event) => {
    if (await act(`rig ${event.target.value}`)) setTimeout(loadParts, 100);
  });
  $("#tempo").addEventListener("change", (event) => act(`tempo ${event.target.value}`));
  $("#snapshot").addEventListener("change", async (event) => {
    const name = event.target.value;
    if (!name) return;
    if (await act(`snapshot ${quoted(name)}`)) setTimeout(refreshValues, 200);
    event.target.value = "";
  });
  for (const button of document.querySelectorAll("[data-player]")) {
    button.addEventListener("click", () => act(`player ${button.dataset.player}`));
  }
  $("#player-position").addEventListener("change", (event) => {
    act(`player locate ${Number(event.target.value).toFixed(2)}`);
    event.target.blur();
  });
  $("#player-song").addEventListener("change", (event) => act(`player load ${event.target.value}`));
  $("#player-loop").addEventListener("change", (event) => act(`player loop ${event.target.checked ? "on" : "off"}`));
  for (const button of document.querySelectorAll("[data-transport]")) {
    button.addEventListener("click", () => act(`transport ${button.dataset.transport}`));
  }
  $("#record").addEventListener("click", async () => {
    const recording = $("#record").classList.contains("on");
    const answer = await act(recording ? "record stop" : "record start");
    if (answer && answer.recorded) {
      const parts = answer.parts && answer.parts.length ? ` and ${answer.parts.length} part files beside it` : "";
      $("#record-state").textContent =
        answer.failed || `saved ${answer.recorded} (${(answer.frames / sampleRate).toFixed(1)} s)${parts}`;
    }
  });
  $("#rig-upload").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) await uploadRig(await file.text());
    event.target.value = "";
  });
  $("#rig-load").addEventListener("click", () => rigFileAction("load", $("#rig-files").value));
  $("#rig-save").addEventListener("click", () => rigFileAction("save", $("#rig-save-name").value.trim()));
  loadParts();
  loadRigFiles();
  connect();
  setInterval(refreshValues, 3000);
}

window.aulos = { uploadRig, act, loadParts, rigFileAction };
start().catch((error) => showError(error.message));
