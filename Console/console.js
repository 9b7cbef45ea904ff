// PushProvider console. Plain ES module, no framework. Every value from the server is rendered with textContent
// or createElement (never parsed as HTML), so a token, a channel or a reason string cannot become markup.
// The API key lives in sessionStorage (this tab only) and is sent only as `Authorization: Bearer`.

const KEY = 'pushprovider.key';
const APP = 'pushprovider.app';
const $ = (id) => document.getElementById(id);

/** An element with attributes and children (strings become text nodes, never markup). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function session() {
  return { key: sessionStorage.getItem(KEY), app: sessionStorage.getItem(APP) };
}

class APIError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

/** One API call with the session's key; JSON in and out. Errors become APIError with the server's message. */
async function api(method, path, body, key = session().key) {
  const headers = { Authorization: `Bearer ${key}` };
  const init = { method, headers, cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) { headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
  const response = await fetch(path, init);
  let json = null;
  try { json = await response.json(); } catch { json = null; }
  if (!response.ok) {
    const error = json && json.error ? json.error : { code: `http_${response.status}`, message: `HTTP ${response.status}` };
    if (response.status === 401 && path !== loginProbe) logout('Your key was refused; log in again.');
    throw new APIError(response.status, error.code, error.message);
  }
  return json;
}

let loginProbe = '';
const appPath = (rest) => `/v1/apps/${encodeURIComponent(session().app)}${rest}`;
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

function setList(dl, pairs) {
  dl.replaceChildren(...pairs.flatMap(([term, value]) => [el('dt', {}, term), value instanceof Node ? el('dd', {}, value) : el('dd', {}, value)]));
}

// ---------------------------------------------------------------- login

async function loadApps() {
  const select = $('login-app');
  let apps = [];
  try {
    const response = await fetch('/healthz/details', { cache: 'no-store', credentials: 'omit' });
    const health = await response.json();
    apps = Object.keys(health.apps || {}).sort();
  } catch { apps = []; }
  select.replaceChildren(...apps.map((app) => el('option', { value: app }, app)));
  const remembered = session().app;
  if (remembered && apps.includes(remembered)) select.value = remembered;
}

async function login(event) {
  event.preventDefault();
  const app = $('login-app').value;
  const key = $('login-key').value.trim();
  $('login-error').textContent = '';
  if (!app || !key) { $('login-error').textContent = 'Choose the app and give its send key.'; return; }
  loginProbe = `/v1/apps/${encodeURIComponent(app)}/devices/count`;
  try {
    await api('GET', loginProbe, undefined, key);
  } catch (error) {
    $('login-error').textContent = error.status === 403
      ? `This key cannot read ${app}: ${error.message}` : `Login failed: ${error.message}`;
    return;
  }
  sessionStorage.setItem(KEY, key);
  sessionStorage.setItem(APP, app);
  $('login-key').value = '';
  showConsole();
}

function logout(message = '') {
  sessionStorage.removeItem(KEY);
  stopPolling();
  $('app-view').hidden = true;
  $('logout').hidden = true;
  $('who').hidden = true;
  $('login-view').hidden = false;
  $('login-error').textContent = message;
  $('login-key').focus();
}

/** Whether the app has Web Push (`apps.ID.webpush`): its key endpoint answers 404 webpush_not_configured when not
 * (503 when configured but its key file is unreadable). Decides whether the counts per service are shown. */
let webPushApp = false;
async function checkWebPush() {
  try {
    await api('GET', appPath('/webpush/key'));
    webPushApp = true;
  } catch (error) {
    webPushApp = error.code === 'webpush_key_unavailable';
  }
}

async function showConsole() {
  webPushApp = false;
  await checkWebPush();
  await checkInbox();
  $('login-view').hidden = true;
  $('app-view').hidden = false;
  $('logout').hidden = false;
  $('who').hidden = false;
  $('current-app').textContent = session().app;
  show('compose');
}

// ---------------------------------------------------------------- views

function show(view) {
  for (const tab of document.querySelectorAll('.tab')) {
    if (tab.dataset.view === view) tab.setAttribute('aria-current', 'page'); else tab.removeAttribute('aria-current');
  }
  for (const section of document.querySelectorAll('.view')) section.hidden = section.id !== `view-${view}`;
  if (view === 'apps') refreshApps();
  if (view === 'compose') { refreshPreview(); refreshRecipients(); }
  if (view === 'jobs') refreshJobs();
  if (view === 'inbox') refreshInbox();
}

// ---------------------------------------------------------------- apps

async function refreshApps() {
  const body = $('device-counts').tBodies[0];
  try {
    const [all, development, production] = await Promise.all([
      api('GET', appPath('/devices/count')),
      api('GET', appPath('/devices/count?environment=development')),
      api('GET', appPath('/devices/count?environment=production')),
    ]);
    body.replaceChildren(
      el('tr', {}, el('td', {}, 'development'), el('td', {}, development.count)),
      el('tr', {}, el('td', {}, 'production'), el('td', {}, production.count)),
      el('tr', {}, el('th', { scope: 'row' }, 'total'), el('td', {}, all.count)));
  } catch (error) {
    body.replaceChildren(el('tr', {}, el('td', { colspan: 2, class: 'error' }, error.message)));
  }
  try {
    const response = await fetch('/healthz/details', { cache: 'no-store', credentials: 'omit' });
    const health = await response.json();
    const app = (health.apps || {})[session().app] || {};
    const pairs = [
      ['Health', el('span', { class: health.status === 'ok' ? 'ok' : 'bad' }, health.status)],
      ['Database', health.database && health.database.ok ? 'reachable' : `unavailable ${health.database?.error ?? ''}`],
      ['Services', (app.services || []).join(', ') || '?'],
    ];
    // APNs' endpoint and credentials, for an app with APNs (a web-only or Android-only app has neither).
    if (app.endpoint !== undefined) {
      pairs.push(['APNs endpoint', app.endpoint]);
      pairs.push(['APNs credentials', `${app.credentials ?? '?'}${app.loaded ? ', loaded' : ', not loaded'}`]);
    }
    if (app.expiresAt) pairs.push(['Expires', app.expiresAt]);
    if (app.daysToExpiry !== undefined) {
      pairs.push(['Days to expiry', el('span', { class: app.expiresSoon || app.expired ? 'bad' : 'ok' }, app.daysToExpiry)]);
    }
    if (app.error) pairs.push(['Error', app.error]);
    // Web Push's VAPID key and FCM's service account, for an app with them.
    if (app.webpush) {
      pairs.push(['Web Push credentials', app.webpush.loaded
        ? el('span', { class: 'ok', title: app.webpush.publicKey }, `VAPID key loaded (${app.webpush.publicKey.slice(0, 12)}…), ${app.webpush.subject}`)
        : el('span', { class: 'bad' }, `not loaded: ${app.webpush.error ?? ''}`)]);
    }
    if (app.fcm) {
      pairs.push(['FCM credentials', app.fcm.loaded
        ? el('span', { class: 'ok' }, `project ${app.fcm.project} (${app.fcm.clientEmail}), endpoint ${app.fcm.endpoint}`)
        : el('span', { class: 'bad' }, `not loaded: ${app.fcm.error ?? ''}`)]);
    }
    // UnifiedPush's VAPID key and exempt hosts (its distributors are the users': none is probed).
    if (app.unifiedpush) {
      const up = app.unifiedpush;
      pairs.push(['UnifiedPush credentials', up.loaded
        ? el('span', { class: 'ok', title: up.publicKey }, `VAPID key loaded (${up.publicKey.slice(0, 12)}…), ${up.subject}`)
        : el('span', { class: 'bad' }, `not loaded: ${up.error ?? ''}`)]);
      pairs.push(['UnifiedPush exempt hosts', (up.exemptHosts || []).join(', ') || 'none']);
    }
    setList($('health'), pairs);
  } catch (error) {
    setList($('health'), [['Health', `unavailable: ${error.message}`]]);
  }
}

// ---------------------------------------------------------------- compose

function target() { return document.querySelector('input[name=target]:checked').value; }

function tokenLines() {
  return $('c-tokens').value.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
}

/** The content fields of the form, as the API takes them; throws a message for invalid custom data. Fields that
 * do not apply are hidden and not sent: a silent push has no title, body, badge or sound; the per-language bodies
 * go with a body (the API's per-locale `alert`, whose `default` is the body). */
function content() {
  const body = {};
  const data = $('c-data').value.trim();
  if ($('c-silent').checked) body.silent = true;
  else {
    const title = $('c-title').value, text = $('c-body').value, sound = $('c-sound').value.trim();
    const badge = $('c-badge').value.trim();
    if (title) body.title = title;
    if (text) {
      const texts = localeTexts();
      body.alert = texts.size ? Object.fromEntries([['default', text], ...texts]) : text;
    }
    if (badge !== '') {
      if (!/^[0-9]+$/.test(badge)) throw new Error('Badge must be a whole number ≥ 0.');
      body.badge = Number(badge);
    }
    if (sound) body.sound = sound;
  }
  if (data) {
    let parsed;
    try { parsed = JSON.parse(data); } catch (error) { throw new Error(`Custom data is not JSON: ${error.message}`); }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('Custom data must be a JSON object.');
    body.data = parsed;
  }
  return body;
}

/** The per-language rows as locale → body (rows left empty are ignored). The locale's form is the server's rule
 * (canonical BCP 47: de, de-AT, pt-BR), checked there with the rest of the content. */
function localeTexts() {
  const texts = new Map();
  for (const row of document.querySelectorAll('#locale-rows .locale-row')) {
    const locale = row.querySelector('.l-locale').value.trim(), text = row.querySelector('.l-text').value;
    if (!locale && !text) continue;
    if (!locale || locale === 'default') throw new Error('Name the language of each row (de, pt-BR); the body above is for the others.');
    if (texts.has(locale)) throw new Error(`The language ${locale} is given twice.`);
    texts.set(locale, text);
  }
  return texts;
}

let localeRowSeq = 0;
/** Adds a row of locale and body, each labelled; its Remove button takes the row away. */
function addLocaleRow() {
  const n = ++localeRowSeq;
  const locale = el('input', { id: `l-locale-${n}`, class: 'l-locale', type: 'text', spellcheck: 'false', placeholder: 'de' });
  const text = el('input', { id: `l-text-${n}`, class: 'l-text', type: 'text' });
  const remove = el('button', { type: 'button', id: `l-remove-${n}`, class: 'l-remove', 'aria-label': `Remove language row ${n}` }, 'Remove');
  const row = el('div', { class: 'locale-row', id: `l-row-${n}` },
    el('div', {}, el('label', { for: locale.id }, 'Language'), locale),
    el('div', {}, el('label', { for: text.id }, 'Body in that language'), text), remove);
  for (const input of [locale, text]) input.addEventListener('input', schedulePreview);
  remove.addEventListener('click', () => { row.remove(); $('l-add').focus(); schedulePreview(); });
  $('locale-rows').append(row);
  locale.focus();
  schedulePreview();
}

/** Shows the fields that apply to what is chosen and hides the others (hidden, not greyed: a field that does not
 * apply is not sent either). */
function refreshFields() {
  const silent = $('c-silent').checked;
  $('c-alert-fields').hidden = silent;
  $('c-locales').hidden = silent || !$('c-body').value;
  const kind = target();
  $('c-channel-field').hidden = kind !== 'channel';
  $('c-tokens-field').hidden = kind !== 'tokens';
  $('audience-builder').hidden = kind !== 'audience';
  $('a-tag-field').hidden = $('a-field').value !== 'tags';
  const when = document.querySelector('input[name=when]:checked').value;
  $('w-at-fields').hidden = when !== 'at';
  $('w-local-fields').hidden = when !== 'local';
  $('w-skip-field').hidden = !$('w-date').value;
}

let previewTimer = 0;
let previewSeq = 0;
function schedulePreview() { clearTimeout(previewTimer); previewTimer = setTimeout(refreshPreview, 250); }

async function refreshPreview() {
  const seq = ++previewSeq;
  $('preview-error').textContent = '';
  let body;
  try { body = content(); } catch (error) { showPreviewError(error.message); return; }
  try {
    const preview = await api('POST', appPath('/payload-preview'), body);
    if (seq !== previewSeq) return;
    $('preview-payload').textContent = JSON.stringify(preview.payload);
    $('preview-bytes').textContent = `${preview.bytes} / ${preview.limit} bytes${preview.truncated ? ' (alert shortened to fit)' : ''}`;
    setList($('preview-headers'), Object.entries(preview.headers));
    setList($('preview-variants'), Object.entries(preview.variants || {}).map(([locale, variant]) =>
      [`Body for ${locale}`, `${JSON.stringify(variant.payload)} (${variant.bytes} bytes)`]));
    showWebPreview(preview);
    showFCMPreview(preview);
    showHMSPreview(preview);
    showHarmonyOSPreview(preview);
    showUnifiedPushPreview(preview);
  } catch (error) {
    if (seq === previewSeq) showPreviewError(error.message);
  }
}

/** The server's `webPush` answer (only for an app with Web Push): what a web device gets, or why it gets nothing. */
function showWebPreview(preview) {
  const web = preview.webPush;
  $('preview-web').hidden = !web;
  if (!web) return;
  if (web.skipped) {
    $('preview-web-form').textContent = `Not sent to web devices: ${web.skipped}`;
    $('preview-web-payload').textContent = '';
  } else {
    const form = web.form === 'declarative' ? 'declarative Web Push form' : 'service-worker form';
    $('preview-web-form').textContent = `${web.bytes} bytes, ${form}`;
    $('preview-web-payload').textContent = JSON.stringify(web.payload);
  }
  $('preview-web-payload').hidden = !!web.skipped;
  setList($('preview-web-variants'), Object.entries(preview.variants || {})
    .filter(([, variant]) => variant.webPush && variant.webPush.payload)
    .map(([locale, variant]) => [`Web body for ${locale}`, `${JSON.stringify(variant.webPush.payload)} (${variant.webPush.bytes} bytes)`]));
}

/** The server's answer for a token service (`fcm`, `hms`; only for an app with it): the message its devices get, or
 * why they get none. `devices` names them, `form` the request, `label` a locale's line. */
function showTokenServicePreview(preview, service, devices, form, label) {
  const answer = preview[service];
  $(`preview-${service}`).hidden = !answer;
  if (!answer) return;
  $(`preview-${service}-size`).textContent = answer.skipped
    ? `Not sent to ${devices}: ${answer.skipped}`
    : `${answer.bytes} bytes, ${form} (the token is the device's)`;
  $(`preview-${service}-payload`).textContent = answer.skipped ? '' : JSON.stringify(answer.payload);
  $(`preview-${service}-payload`).hidden = !!answer.skipped;
  setList($(`preview-${service}-variants`), Object.entries(preview.variants || {})
    .filter(([, variant]) => variant[service] && variant[service].payload)
    .map(([locale, variant]) => [`${label} for ${locale}`, `${JSON.stringify(variant[service].payload)} (${variant[service].bytes} bytes)`]));
}

/** The server's `fcm` answer: the message an Android device gets. */
function showFCMPreview(preview) {
  showTokenServicePreview(preview, 'fcm', 'Android devices', 'FCM HTTP v1 message', 'Android message');
}

/** The server's `hms` answer: the message a Huawei phone gets through Push Kit. */
function showHMSPreview(preview) {
  showTokenServicePreview(preview, 'hms', 'Huawei phones', 'Push Kit message', 'Huawei message');
}

/** The server's `harmonyos` answer: the scenario-API message a HarmonyOS NEXT phone gets, with its push-type. */
function showHarmonyOSPreview(preview) {
  const answer = preview.harmonyos;
  const form = answer && answer.pushType === 6 ? 'Push Kit background message (push-type 6)' : 'Push Kit alert message (push-type 0)';
  showTokenServicePreview(preview, 'harmonyos', 'HarmonyOS phones', form, 'HarmonyOS message');
}

/** The server's `unifiedPush` answer (only for an app with UnifiedPush): the JSON the app's code receives. Unlike
 * Web Push's, a silent push is sent. */
function showUnifiedPushPreview(preview) {
  const up = preview.unifiedPush;
  $('preview-unifiedpush').hidden = !up;
  if (!up) return;
  $('preview-unifiedpush-size').textContent = up.skipped
    ? `Not sent to UnifiedPush devices: ${up.skipped}`
    : `${up.bytes} bytes, the JSON the app receives (encrypted for the device)`;
  $('preview-unifiedpush-payload').textContent = up.skipped ? '' : JSON.stringify(up.payload);
  $('preview-unifiedpush-payload').hidden = !!up.skipped;
  setList($('preview-unifiedpush-variants'), Object.entries(preview.variants || {})
    .filter(([, variant]) => variant.unifiedPush && variant.unifiedPush.payload)
    .map(([locale, variant]) => [`UnifiedPush message for ${locale}`, `${JSON.stringify(variant.unifiedPush.payload)} (${variant.unifiedPush.bytes} bytes)`]));
}

function showPreviewError(message) {
  $('preview-web').hidden = true;
  $('preview-fcm').hidden = true;
  $('preview-hms').hidden = true;
  $('preview-harmonyos').hidden = true;
  $('preview-unifiedpush').hidden = true;
  $('preview-payload').textContent = '';
  $('preview-bytes').textContent = '';
  $('preview-headers').replaceChildren();
  $('preview-variants').replaceChildren();
  $('preview-error').textContent = message;
}

let recipientTimer = 0;
let recipientSeq = 0;
let lastCount = null;
function scheduleRecipients() { clearTimeout(recipientTimer); recipientTimer = setTimeout(refreshRecipients, 250); }

async function refreshRecipients() {
  const seq = ++recipientSeq;
  const kind = target();
  refreshFields();
  const out = $('recipients');
  const split = $('recipients-by-service');
  split.hidden = true;
  lastCount = null;
  try {
    let count;
    // The audience whose count per service is shown (an app with Web Push or FCM devices; listed tokens are not split).
    let serviceAudience = null;
    let byService = null;
    if (kind === 'all') {
      count = (await api('GET', appPath('/devices/count'))).count;
      serviceAudience = { where: ['service in apns,webpush,fcm,hms,harmonyos,unifiedpush'] };
    } else if (kind === 'audience') {
      const audience = audienceOf();
      if (!audience) { out.textContent = 'Name a user or add a clause.'; return; }
      ({ count, byService } = await api('POST', appPath('/audience-count'), { audience }));
    }
    else if (kind === 'channel') {
      const channel = $('c-channel').value.trim();
      if (!channel) { out.textContent = 'Name a channel.'; return; }
      count = (await api('GET', appPath(`/devices/count?channel=${encodeURIComponent(channel)}`))).count;
      serviceAudience = { where: [`channel = ${JSON.stringify(channel)}`] };
    } else count = new Set(tokenLines()).size;
    if (serviceAudience) {
      try { byService = (await api('POST', appPath('/audience-count'), { audience: serviceAudience })).byService; } catch { byService = null; }
    }
    if (seq !== recipientSeq) return;
    lastCount = count;
    out.textContent = plural(count, 'recipient', 'recipients');
    // FCM needs no app configuration to register: its count shows once the app has FCM devices.
    if (byService && (webPushApp || byService.fcm > 0 || byService.hms > 0 || byService.harmonyos > 0 || byService.unifiedpush > 0)) {
      split.textContent = `APNs: ${byService.apns}` + (webPushApp ? ` · Web Push: ${byService.webpush}` : '')
        + (byService.fcm > 0 ? ` · FCM: ${byService.fcm}` : '') + (byService.hms > 0 ? ` · Huawei: ${byService.hms}` : '')
        + (byService.harmonyos > 0 ? ` · HarmonyOS: ${byService.harmonyos}` : '')
        + (byService.unifiedpush > 0 ? ` · UnifiedPush: ${byService.unifiedpush}` : '');
      split.hidden = false;
    }
  } catch (error) {
    if (seq === recipientSeq) out.textContent = error.message;
  }
}

/** The audience of the builder, as the API takes it (`{user?, where?}`), or null when it names nothing. */
function audienceOf() {
  const audience = {};
  const user = $('a-user').value.trim();
  const where = $('a-clauses').value.split('\n').map((line) => line.trim()).filter((line) => line);
  if (user) audience.user = user;
  if (where.length) audience.where = where;
  return user || where.length ? audience : null;
}

/** Appends the clause the field, test and value controls describe to the clauses, then recounts (`tags.NAME`
 * takes the tag's name from its own field). */
function addClause() {
  let field = $('a-field').value;
  const op = $('a-op').value, value = $('a-value').value.trim();
  if (field === 'tags') {
    const tag = $('a-tag').value.trim();
    if (!tag) { $('recipients').textContent = 'Name the tag (tags.NAME).'; $('a-tag').focus(); return; }
    field = `tags.${tag}`;
  }
  const clause = op === 'exists' || op === 'missing' ? `${field} ${op}` : `${field} ${op} ${value}`;
  const box = $('a-clauses');
  box.value = (box.value.trim() ? `${box.value.trim()}\n` : '') + clause;
  $('a-value').value = '';
  scheduleRecipients();
}

/** With "At a time": the date and time in this browser's zone, as the API's `at` (RFC 3339 in UTC). */
function atOf() {
  if (document.querySelector('input[name=when]:checked').value !== 'at') return null;
  const date = $('w-at-date').value, time = $('w-at-time').value;
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(date) || !/^[0-9]{2}:[0-9]{2}$/.test(time)) throw new Error('Give the date and time to send at.');
  const at = new Date(`${date}T${time}`);
  if (Number.isNaN(at.getTime())) throw new Error('Give the date and time to send at.');
  return at.toISOString().replace(/\.000Z$/, 'Z');
}

function localTimeOf() {
  if (document.querySelector('input[name=when]:checked').value !== 'local') return null;
  const time = $('w-time').value;
  if (!/^[0-9]{2}:[0-9]{2}$/.test(time)) throw new Error('Give the local time as HH:MM.');
  const spec = { time };
  if ($('w-date').value) spec.date = $('w-date').value;
  if (spec.date && $('w-skip').checked) spec.skipPast = true;
  return spec;
}

function jobBody() {
  const body = content();
  const kind = target();
  if (kind === 'all') body.all = true;
  else if (kind === 'channel') body.channel = $('c-channel').value.trim();
  else if (kind === 'audience') {
    const audience = audienceOf();
    if (!audience) throw new Error('Name a user or add a clause to the audience.');
    body.audience = audience;
  } else body.tokens = tokenLines();
  const localTime = localTimeOf();
  if (localTime) body.localTime = localTime;
  const at = atOf();
  if (at) body.at = at;
  return body;
}

async function submitCompose(event) {
  event.preventDefault();
  $('send-error').textContent = '';
  let body;
  try { body = jobBody(); } catch (error) { $('send-error').textContent = error.message; return; }
  if (body.all) {
    await refreshRecipients();
    $('confirm-text').textContent = `Send this notification to all ${plural(lastCount ?? 0, 'device', 'devices')} of ${session().app}?`;
    $('confirm-all').hidden = false;
    $('confirm-send').focus();
    return;
  }
  await send(body);
}

async function send(body) {
  $('send').disabled = true;
  try {
    const job = await api('POST', appPath('/notifications'), body);
    show('jobs');
    watchJob(job.id);
  } catch (error) {
    $('send-error').textContent = error.message;
  } finally {
    $('send').disabled = false;
  }
}

// ---------------------------------------------------------------- jobs

async function refreshJobs() {
  const body = $('jobs-table').tBodies[0];
  try {
    const { jobs } = await api('GET', appPath('/notifications?limit=50'));
    body.replaceChildren(...jobs.map((job) => {
      const button = el('button', { type: 'button', class: 'jobs-show', 'aria-label': `Show job ${job.id}` }, 'Show');
      button.addEventListener('click', () => watchJob(job.id));
      return el('tr', {}, el('td', {}, job.id), el('td', {}, job.state), el('td', {}, job.total),
        el('td', {}, new Date(job.createdMs).toISOString()), el('td', {}, button));
    }));
    if (jobs.length === 0) body.replaceChildren(el('tr', {}, el('td', { colspan: 5 }, 'No jobs yet.')));
  } catch (error) {
    body.replaceChildren(el('tr', {}, el('td', { colspan: 5, class: 'error' }, error.message)));
  }
}

let pollTimer = 0;
let watched = null;
function stopPolling() { clearTimeout(pollTimer); watched = null; }

function watchJob(id) {
  stopPolling();
  watched = { id, samples: [] };
  $('job-detail').hidden = false;
  $('job-id').textContent = id;
  $('job-error').textContent = '';
  $('job-cancel').disabled = false;
  pollJob(id);
}

const FINAL = new Set(['completed', 'cancelled']);

async function pollJob(id) {
  if (!watched || watched.id !== id) return;
  let status;
  try {
    status = await api('GET', appPath(`/notifications/${encodeURIComponent(id)}`));
  } catch (error) {
    if (!watched || watched.id !== id) return;
    if (error.code === 'job_cancelled') {
      $('job-state').textContent = 'cancelled';
      $('job-numbers').textContent = error.message;
      $('job-cancel').disabled = true;
      refreshJobs();
      return;
    }
    $('job-error').textContent = error.message;
    pollTimer = setTimeout(() => pollJob(id), 2000);
    return;
  }
  if (!watched || watched.id !== id) return;
  renderJob(status);
  if (FINAL.has(status.state)) { $('job-cancel').disabled = true; refreshJobs(); return; }
  pollTimer = setTimeout(() => pollJob(id), 1000);
}

function renderJob(status) {
  $('job-state').textContent = status.state + (status.at && status.state === 'pending' ? ` (scheduled for ${status.at})` : '');
  const progress = $('job-progress');
  progress.max = Math.max(status.total, 1);
  progress.value = status.total === 0 && status.state === 'completed' ? 1 : status.done;
  const samples = watched.samples;
  samples.push({ t: Date.now(), done: status.done });
  while (samples.length > 10) samples.shift();
  let rate = 0;
  if (samples.length > 1) {
    const first = samples[0], last = samples[samples.length - 1];
    rate = (last.done - first.done) / Math.max((last.t - first.t) / 1000, 0.001);
  } else if (status.finishedMs && status.createdMs && status.finishedMs > status.createdMs) {
    rate = status.done / ((status.finishedMs - status.createdMs) / 1000);
  }
  const parts = [`${status.done} / ${status.total} done`, `${rate.toFixed(1)} per second`];
  if (!FINAL.has(status.state) && rate > 0 && status.total > status.done) {
    parts.push(`about ${Math.ceil((status.total - status.done) / rate)} s left`);
  }
  $('job-numbers').textContent = parts.join(' · ');
  $('job-error').textContent = status.error ?? '';
  renderWaves(status);
  renderChart(status);
}

/** A local-time job's waves: when each starts, its UTC offset, its state and progress. */
function renderWaves(status) {
  const waves = status.waves || [];
  $('job-waves').hidden = waves.length === 0;
  const shown = waves.filter((wave) => wave.total > 0 || wave.state !== 'completed' || wave.done > 0);
  $('waves-table').tBodies[0].replaceChildren(...shown.map((wave) =>
    el('tr', {}, el('td', {}, wave.at), el('td', {}, wave.utcOffset), el('td', {}, wave.state), el('td', {}, `${wave.done} / ${wave.total}`))));
  if (status.localTime) $('job-state').textContent += ` · ${status.localTime} local time, ${waves.length} waves`;
}

/** Outcomes by reason as an SVG bar chart; labels are SVG text nodes (textContent). */
function renderChart(status) {
  const rows = [['accepted', status.accepted, 'bar-accepted']];
  for (const [reason, n] of Object.entries(status.notAccepted || {})) rows.push([reason, n, reason === 'deferred' ? 'bar-deferred' : 'bar-other']);
  const max = Math.max(1, ...rows.map((row) => row[1]));
  const rowHeight = 24, labelWidth = 220, barWidth = 300;
  const chart = svg('svg', { class: 'chart', width: labelWidth + barWidth + 60, height: rows.length * rowHeight + 4, role: 'img', 'aria-label': 'Outcomes by reason' });
  rows.forEach(([label, n, cls], i) => {
    const y = i * rowHeight + 2;
    chart.append(svg('text', { x: 0, y: y + 16 }, label));
    chart.append(svg('rect', { x: labelWidth, y: y + 3, height: rowHeight - 8, width: Math.max(n > 0 ? 2 : 0, (n / max) * barWidth), class: cls }));
    chart.append(svg('text', { x: labelWidth + (n / max) * barWidth + 6, y: y + 16 }, n));
  });
  const list = el('ul', { class: 'sr' }, ...rows.map(([label, n]) => el('li', {}, `${label}: ${n}`)));
  $('job-chart').replaceChildren(chart, list);
}

async function cancelJob() {
  if (!watched) return;
  const id = watched.id;
  try {
    const status = await api('DELETE', appPath(`/notifications/${encodeURIComponent(id)}`));
    stopPolling();
    watched = { id, samples: [] };
    renderJob(status);
    $('job-cancel').disabled = true;
    refreshJobs();
  } catch (error) {
    $('job-error').textContent = error.message;
  }
}

// ---------------------------------------------------------------- inbox

/** Shows the Inbox tab only when the server runs the built-in simulator (the route answers 404 inbox_unavailable). */
async function checkInbox() {
  let available = false;
  try { await api('GET', appPath('/inbox?limit=1')); available = true; } catch { available = false; }
  $('tab-inbox').hidden = !available;
}

const SERVICE_NAMES = { apns: 'APNs', webpush: 'Web Push', fcm: 'FCM', hms: 'Huawei Push Kit', harmonyos: 'HarmonyOS Push Kit', unifiedpush: 'UnifiedPush' };

/** One inbox entry: its service, device and time, the facts of its request, and what the device gets. */
function inboxItem(entry) {
  const record = entry.record || {};
  const facts = entry.service === 'apns'
    ? [['Topic', record.topic], ['Push type', record.pushType], ['Priority', record.priority], ['Collapse id', record.collapseId ?? 'none']]
    : entry.service === 'webpush' || entry.service === 'unifiedpush'
      ? [['TTL', `${record.ttl} s`], ['Urgency', record.urgency ?? 'normal (none sent)'], ['Topic', record.topic ?? 'none']]
      : entry.service === 'hms'
        ? [['Client id', record.clientId], ['Request id', record.requestId]]
        : entry.service === 'harmonyos'
        ? [['Project', record.projectId], ['Push type', record.pushType], ['Request id', record.requestId]]
        : [['Project', record.project], ['Message id', record.messageId]];
  const dl = el('dl', { class: 'facts' });
  setList(dl, facts.map(([term, value]) => [term, String(value ?? '')]));
  const device = entry.device.length > 48 ? `${entry.device.slice(0, 45)}…` : entry.device;
  return el('li', { class: 'inbox-entry', 'data-service': entry.service, 'data-sequence': entry.sequence },
    el('h3', {}, `${SERVICE_NAMES[entry.service] ?? entry.service} · `, el('span', { title: entry.device }, device), ` · ${entry.receivedAt}`),
    dl,
    el('pre', { class: 'inbox-content' }, typeof entry.content === 'string' ? entry.content : JSON.stringify(entry.content, null, 2)));
}

async function refreshInbox(event) {
  if (event) event.preventDefault();
  $('inbox-error').textContent = '';
  const params = new URLSearchParams({ limit: '100' });
  if ($('i-service').value) params.set('service', $('i-service').value);
  if ($('i-device').value.trim()) params.set('device', $('i-device').value.trim());
  try {
    const page = await api('GET', appPath(`/inbox?${params}`));
    $('inbox-entries').replaceChildren(...page.entries.map(inboxItem));
    $('inbox-status').textContent = page.entries.length
      ? `${plural(page.entries.length, 'notification', 'notifications')} (the simulator keeps the newest ${page.capacity} of every app together)`
      : 'Nothing received yet: send to a device of this app, then Refresh.';
  } catch (error) {
    $('inbox-error').textContent = error.message;
  }
}

async function clearInbox() {
  $('inbox-error').textContent = '';
  try {
    await api('DELETE', appPath('/inbox'));
    await refreshInbox();
  } catch (error) {
    $('inbox-error').textContent = error.message;
  }
}

// ---------------------------------------------------------------- devices

async function findDevice(event) {
  event.preventDefault();
  $('device-error').textContent = '';
  $('device-result').hidden = true;
  // What was pasted says how to look it up: hex is an APNs token or a device key (NSData's <…> form too), an
  // https URL a Web Push endpoint, anything else an FCM registration token; the server checks each and names the
  // field when it is not one.
  const text = $('d-token').value.trim();
  const hex = text.replace(/[<>\s]/g, '');
  let path;
  if (/^[0-9A-Fa-f\s<>]+$/.test(text)) {
    if (!/^([0-9A-Fa-f]{2}){8,100}$/.test(hex)) { $('device-error').textContent = 'A token or device key is 16 to 200 hex digits.'; return; }
    path = `/devices/${hex}`;
  } else if (/^https:\/\//i.test(text)) {
    path = `/devices/lookup?endpoint=${encodeURIComponent(text)}`;
  } else {
    path = `/devices/lookup?fcmToken=${encodeURIComponent(text)}`;
  }
  try {
    const device = await api('GET', appPath(path));
    const token = device.token;
    const history = await api('GET', appPath(`/deliveries?token=${token}&limit=1`));
    const last = history.deliveries[0];
    const pairs = [
      ['Token', device.token],
      ['Service', SERVICE_NAMES[device.service] ?? device.service],
      ...(device.endpoint ? [['Endpoint', el('span', { title: device.endpoint }, shortEndpoint(device.endpoint))]] : []),
      ...(device.fcmToken ? [['FCM token', el('span', { title: device.fcmToken }, `${device.fcmToken.slice(0, 24)}…`)]] : []),
      ...(device.harmonyosToken ? [['HarmonyOS token', el('span', { title: device.harmonyosToken }, `${device.harmonyosToken.slice(0, 24)}…`)]] : []),
      ...(device.hmsToken ? [['HMS token', el('span', { title: device.hmsToken }, `${device.hmsToken.slice(0, 24)}…`)]] : []),
      ['Environment', device.environment],
      ['Channels', device.channels.length ? device.channels.join(', ') : 'none'],
      ['First registered', device.registeredAt],
      ['Last registration', device.lastRegisteredAt],
      ['Last success', device.lastSuccessAt ?? 'none recorded'],
      ['Installation', device.installation ?? 'none'],
      ['User', device.user ?? 'none'],
      ['Time zone', device.timeZone ?? 'none (the app\'s defaultTimeZone)'],
      ['Locale', device.locale ?? 'none'],
      ['App version', device.appVersion ?? 'none'],
      ['OS version', device.osVersion ?? 'none'],
      ['Tags', device.tags && Object.keys(device.tags).length ? JSON.stringify(device.tags) : 'none'],
      ['Last delivery', last ? `${last.status ?? 'unknown'}${last.reason ? ` (${last.reason})` : ''} at ${last.time}${last.broadcast ? `, job ${last.broadcast}` : ''}` : 'none recorded'],
    ];
    setList($('device-facts'), pairs);
    $('device-result').hidden = false;
  } catch (error) {
    $('device-error').textContent = error.message;
  }
}

/** A Web Push endpoint shortened for display: its origin and the start of its path (the full URL in the title). */
function shortEndpoint(endpoint) {
  try {
    const url = new URL(endpoint);
    const path = url.pathname + url.search;
    return `${url.origin}${path.length > 17 ? `${path.slice(0, 16)}…` : path}`;
  } catch { return endpoint.length > 48 ? `${endpoint.slice(0, 47)}…` : endpoint; }
}

// ---------------------------------------------------------------- wiring

function start() {
  $('login-form').addEventListener('submit', login);
  $('logout').addEventListener('click', () => logout());
  for (const tab of document.querySelectorAll('.tab')) tab.addEventListener('click', () => show(tab.dataset.view));
  $('apps-refresh').addEventListener('click', refreshApps);
  const form = $('compose-form');
  form.addEventListener('submit', submitCompose);
  for (const id of ['c-title', 'c-body', 'c-badge', 'c-sound', 'c-silent', 'c-data']) {
    $(id).addEventListener('input', schedulePreview);
    $(id).addEventListener('change', schedulePreview);
  }
  for (const id of ['c-body', 'c-silent', 'a-field', 'w-date']) {
    $(id).addEventListener('input', refreshFields);
    $(id).addEventListener('change', refreshFields);
  }
  $('l-add').addEventListener('click', addLocaleRow);
  for (const radio of document.querySelectorAll('input[name=target]')) radio.addEventListener('change', refreshRecipients);
  $('c-channel').addEventListener('input', scheduleRecipients);
  $('a-user').addEventListener('input', scheduleRecipients);
  $('a-clauses').addEventListener('input', scheduleRecipients);
  $('a-add').addEventListener('click', addClause);
  for (const radio of document.querySelectorAll('input[name=when]')) radio.addEventListener('change', refreshFields);
  $('c-tokens').addEventListener('input', scheduleRecipients);
  $('confirm-send').addEventListener('click', async () => {
    $('confirm-all').hidden = true;
    let body;
    try { body = jobBody(); } catch (error) { $('send-error').textContent = error.message; return; }
    await send(body);
  });
  $('confirm-cancel').addEventListener('click', () => { $('confirm-all').hidden = true; $('send').focus(); });
  $('jobs-refresh').addEventListener('click', refreshJobs);
  $('job-cancel').addEventListener('click', cancelJob);
  $('device-form').addEventListener('submit', findDevice);
  $('inbox-form').addEventListener('submit', refreshInbox);
  $('inbox-clear').addEventListener('click', clearInbox);
  refreshFields();
  loadApps().then(() => {
    if (session().key && session().app) showConsole();
    else $('login-app').focus();
  });
}

start();
