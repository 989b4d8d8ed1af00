const S = JSON.parse(document.getElementById('state').textContent);
const T = S.texts;
const HEADERS = {'Content-Type': 'application/json', [S.token_header]: S.token};
const msg = document.getElementById('message');
let chain = Promise.resolve();
function show(text, error) { msg.textContent = text; msg.className = error ? 'error' : ''; }
function save(body) {
  chain = chain.then(async () => {
    const response = await fetch('/api/cases/' + encodeURIComponent(S.id), {method: 'POST',
      headers: HEADERS, body: JSON.stringify({...body, version: S.version})});
    const reply = await response.json();
    if (response.status === 409) { show(T.stale, true); throw new Error('stale'); }
    if (!response.ok) { show(T.failed + ': ' + reply.error, true); throw new Error(reply.error); }
    S.version = reply.row.review.version;
    const status = document.getElementById('status');
    status.textContent = T[reply.row.review.status];
    status.dataset.status = reply.row.review.status;
    if (reply.pool_html !== undefined) { document.getElementById('pool').innerHTML = reply.pool_html; bindChunks(); }
    if (reply.keypoint_html !== undefined) { document.getElementById('kpfound').innerHTML = reply.keypoint_html; }
    show(T.saved + ' (v' + S.version + ')', false);
    return reply;
  });
  return chain;
}
function go(dir) { location.href = '/step/' + encodeURIComponent(S.id) + '?dir=' + dir + '&filter=' + S.filter; }
function act(action) { save({action: action}).then(() => go('next'), () => {}); }
function checkedChunks() { return [...document.querySelectorAll('input.pick:checked')].map(box => box.value); }
function bindChunks() {
  document.querySelectorAll('input.pick').forEach(box => box.addEventListener('change', () => {
    box.closest('.chunk').classList.toggle('checked', box.checked);
    save({relevant_chunk_ids: checkedChunks()}).catch(() => {});
  }));
}
function keypoints(text) {
  return text.split('\n').map(line => line.split('|').map(a => a.trim()).filter(a => a)).filter(k => k.length);
}
const unsaved = new Map();
function bindField(id, build) {
  const field = document.getElementById(id);
  if (!field) return;
  let timer = null;
  const flush = () => {
    if (timer === null) return;
    clearTimeout(timer); timer = null; unsaved.delete(id);
    save(build(field.value)).catch(() => {});
  };
  field.addEventListener('input', () => {
    clearTimeout(timer); timer = setTimeout(flush, 600); unsaved.set(id, () => build(field.value)); });
  field.addEventListener('change', flush);
  field.addEventListener('blur', flush);
}
// leaving the page while typing: the last edit goes out with the page (a keepalive request survives the unload)
window.addEventListener('pagehide', () => {
  for (const build of unsaved.values()) {
    fetch('/api/cases/' + encodeURIComponent(S.id), {method: 'POST', keepalive: true, headers: HEADERS,
      body: JSON.stringify({...build(), version: S.version})});
  }
  unsaved.clear();
});
// the pool's chunk ids in page order: a search hit already in the pool says which candidate it is
function poolNumbers() {
  return new Map([...document.querySelectorAll('input.pick')].map((box, index) => [box.value, index + 1]));
}
function searchResult(hit, checked, inPool) {
  const label = document.createElement('label');
  label.className = 'chunk' + (checked ? ' checked' : '');
  const box = document.createElement('input');
  box.type = 'checkbox'; box.className = 'hit'; box.value = hit.chunk_id; box.checked = checked;
  const rank = document.createElement('span'); rank.className = 'n'; rank.textContent = '#' + hit.rank;
  const text = document.createElement('span');
  if (hit.title) { const title = document.createElement('strong'); title.textContent = hit.title; text.append(title, document.createElement('br')); }
  const meta = document.createElement('span'); meta.className = 'meta'; meta.textContent = hit.doc_id;
  if (inPool) {
    const pooled = document.createElement('span'); pooled.className = 'in-pool';
    pooled.textContent = T.in_pool.replace('{n}', inPool);
    meta.append(' · ', pooled);
  }
  text.append(hit.text, document.createElement('br'), meta);
  label.append(box, rank, text);
  box.addEventListener('change', () => {
    label.classList.toggle('checked', box.checked);
    const body = box.checked ? {found_chunk_ids: [hit.chunk_id]}
      : {relevant_chunk_ids: checkedChunks().filter(id => id !== hit.chunk_id)};
    save(body).catch(() => {});
  });
  return label;
}
const searchForm = document.getElementById('search-form');
if (searchForm) searchForm.addEventListener('submit', async event => {
  event.preventDefault();
  const response = await fetch('/api/search?k=' + S.search_k + '&q=' + encodeURIComponent(document.getElementById('search').value));
  const reply = await response.json();
  const results = document.getElementById('search-results');
  if (!response.ok) { show(T.failed + ': ' + reply.error, true); return; }
  const checked = new Set(checkedChunks());
  const pool = poolNumbers();
  results.replaceChildren(...reply.map(hit => searchResult(hit, checked.has(hit.chunk_id), pool.get(hit.chunk_id))));
  if (!reply.length) results.textContent = T.search_none;
});
bindChunks();
bindField('answer', value => ({ground_truth: value}));
bindField('keypoints', value => ({keypoints: keypoints(value)}));
for (const name of ['accept', 'reject', 'no_answer', 'skip', 'reopen']) {
  const button = document.getElementById(name);
  if (button) button.addEventListener('click', () => act(name));
}
document.getElementById('back').addEventListener('click', () => go('back'));
document.getElementById('next').addEventListener('click', () => go('next'));
document.getElementById('filter').addEventListener('change', event => {
  location.href = '/case/' + encodeURIComponent(S.id) + '?filter=' + event.target.value; });
document.getElementById('lang').addEventListener('click', () => {
  document.cookie = 'lang=' + S.other_language + ';path=/;SameSite=Strict'; location.reload(); });
const exportButton = document.getElementById('export');
exportButton.addEventListener('click', async () => {
  const response = await fetch('/api/export', {method: 'POST', headers: HEADERS, body: '{}'});
  const reply = await response.json();
  const result = document.getElementById('export-result');
  result.textContent = response.ok ? reply.message : T.export_failed + ': ' + reply.error;
  result.className = response.ok ? '' : 'error';
});
document.addEventListener('keydown', event => {
  if (event.target.matches('textarea, input[type=text], select')) { if (event.key === 'Escape') event.target.blur(); return; }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const keys = {a: 'accept', r: 'reject', x: 'no_answer', s: 'skip'};
  if (keys[event.key] && document.getElementById(keys[event.key])) { event.preventDefault(); act(keys[event.key]); }
  else if (event.key === '/' && document.getElementById('search')) { event.preventDefault(); document.getElementById('search').focus(); }
  else if (event.key === 'b' || event.key === 'ArrowLeft') go('back');
  else if (event.key === 'n' || event.key === 'ArrowRight') go('next');
  else if (event.key === 'e' || event.key === 'k') {
    const field = document.getElementById(event.key === 'e' ? 'answer' : 'keypoints');
    if (field) { event.preventDefault(); field.focus(); }
  } else if (/^[1-9]$/.test(event.key)) {
    const box = document.querySelectorAll('input.pick')[Number(event.key) - 1];
    if (box) { box.checked = !box.checked; box.dispatchEvent(new Event('change')); }
  }
});
