// Renders the real chat templates in data/chat_templates with @huggingface/jinja (the Jinja
// implementation of transformers.js) on conversations from the dataset, and writes every case with
// its expected text (or the exception the template raised) to OUT_DIR/chat_template_cases.json.
// Usage: node chat_template_oracle.js REPO_ROOT NODE_MODULES_DIR OUT_DIR
'use strict';
const fs = require('fs');
const path = require('path');

const [repoRoot, nodeModules, outDir] = process.argv.slice(2);
if (!repoRoot || !nodeModules || !outDir) {
  console.error('usage: node chat_template_oracle.js REPO_ROOT NODE_MODULES_DIR OUT_DIR');
  process.exit(2);
}
const { Template } = require(path.join(nodeModules, '@huggingface/jinja'));

const templateDir = path.join(repoRoot, 'tests/runtime/text/data/chat_templates');
// Special tokens as each model's tokenizer_config.json defines them.
const templates = {
  'qwen2-vl-7b-instruct': { bos_token: null, eos_token: '<|im_end|>', vision: true },
  'qwen2.5-7b-instruct': { bos_token: null, eos_token: '<|im_end|>', tools: true },
  'llama-3.1-8b-instruct': { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>', tools: true },
  'llama-3.2-3b-instruct': { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>', tools: true },
  'mistral-nemo-instruct-2407': { bos_token: '<s>', eos_token: '</s>', tools: true },
  'gemma-2-2b-it': { bos_token: '<bos>', eos_token: '<eos>' },
  'chatml': { bos_token: '<s>', eos_token: '<|im_end|>' },
  // More templates for the engine's sake: macros with recursion, namespaces, string methods.
  'hermes-3-llama-3.1-70b-tool_use': { bos_token: '<|begin_of_text|>', eos_token: '<|im_end|>', tools: true, always_tools: true },
  'deepseek-r1-distill-qwen-32b': { bos_token: '<｜begin▁of▁sentence｜>', eos_token: '<｜end▁of▁sentence｜>' },
  'mixtral-8x7b-instruct-v0.1': { bos_token: '<s>', eos_token: '</s>' },
  'phi-3.5-mini-instruct': { bos_token: '<s>', eos_token: '<|endoftext|>' },
};

// A fixed "now" for strftime_now, 2024-07-26T00:00:00Z: @huggingface/jinja reads `new Date()` in
// local time, so the oracle runs in UTC with Date's clock pinned. The C++ side injects the same.
const clockEpochSeconds = 1721952000;
process.env.TZ = 'UTC';
const RealDate = Date;
global.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(clockEpochSeconds * 1000);
    else super(...args);
  }
};

// ---- conversations from the dataset ----
function readJsonl(file) {
  return fs.readFileSync(path.join(repoRoot, 'data/sft', file), 'utf8')
    .split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}
const roleOf = { human: 'user', user: 'user', gpt: 'assistant', assistant: 'assistant', system: 'system' };
function toMessages(record) {
  if (record.messages) return record.messages.map((m) => ({ role: m.role, content: m.content }));
  return record.conversations.map((m) => {
    if (!(m.from in roleOf)) throw new Error('unknown ShareGPT role ' + m.from);
    return { role: roleOf[m.from], content: m.value };
  });
}
// Every step-th record of a file, up to count, so the picks spread over the whole file.
function spread(records, count, filter) {
  const chosen = records.filter(filter);
  const step = Math.max(1, Math.floor(chosen.length / count));
  const out = [];
  for (let i = 0; i < chosen.length && out.length < count; i += step) out.push(chosen[i]);
  return out;
}
const sharegpt = readJsonl('sharegpt.jsonl');
const openai = readJsonl('openai.jsonl');
const mixed = readJsonl('mixed.jsonl');
const textRecords = [
  ...spread(sharegpt, 8, (r) => !r.image && !r.images),
  ...spread(openai, 8, () => true),
  ...spread(mixed, 8, (r) => !r.image && !r.images),
].map((record, i) => ({ id: record.id || `record-${i}`, messages: toMessages(record) }));
const imageRecords = [
  ...spread(sharegpt, 6, (r) => Array.isArray(r.images) && r.images.length > 1),
  ...spread(sharegpt, 4, (r) => typeof r.image === 'string'),
].map((record) => ({ id: record.id, messages: toMessages(record) }));

// The content-list form processors use: each <image> in the text becomes {"type": "image"}.
function toContentList(messages) {
  return messages.map((m) => {
    if (m.role !== 'user' || !m.content.includes('<image>')) return m;
    const content = [];
    m.content.split('<image>').forEach((piece, i) => {
      if (i > 0) content.push({ type: 'image' });
      if (piece) content.push({ type: 'text', text: piece });
    });
    return { role: m.role, content };
  });
}
const withoutSystem = (messages) => messages.filter((m) => m.role !== 'system');
const withSystem = (messages) => messages[0].role === 'system' ? messages
  : [{ role: 'system', content: 'You are a concise assistant. Answer from the given sources only.' }, ...messages];
// A generation prompt follows a user turn: drop the final assistant answer.
const promptOnly = (messages) => messages[messages.length - 1].role === 'assistant'
  ? messages.slice(0, -1) : messages;

const tools = [{
  type: 'function',
  function: {
    name: 'get_package_info',
    description: 'Look up a Debian package: its version, section and a “short” description.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The package name, e.g. "coreutils"' },
        release: { type: 'string', enum: ['bookworm', 'trixie'], description: 'The Debian release' },
        max_results: { type: 'integer', minimum: 1, description: 'How many packages at most' },
      },
      required: ['name'],
    },
  },
}];
const toolConversation = [
  { role: 'system', content: 'You help with Debian packages.' },
  { role: 'user', content: 'Which version of coreutils is in bookworm?' },
  {
    role: 'assistant', content: '',
    tool_calls: [{ id: 'call00001', type: 'function', function: { name: 'get_package_info', arguments: { name: 'coreutils', release: 'bookworm', max_results: 1 } } }],
  },
  { role: 'tool', tool_call_id: 'call00001', content: '{"version": "9.1-1", "section": "utils"}' },
  { role: 'assistant', content: 'Bookworm ships coreutils 9.1-1.' },
];

// ---- cases ----
const cases = [];
function addCase(templateName, name, variables) {
  const source = fs.readFileSync(path.join(templateDir, templateName + '.jinja'), 'utf8');
  const info = templates[templateName];
  // transformers' apply_chat_template always passes tools and documents (None when absent).
  // The Hermes tool-use template is only used with tools, so it gets a list even when empty.
  const all = { tools: info.always_tools ? [] : null, documents: null, bos_token: info.bos_token,
                eos_token: info.eos_token, ...variables };
  const entry = { name: `${templateName}/${name}`, template: templateName + '.jinja', variables: all,
                  clock_epoch_seconds: clockEpochSeconds };
  try {
    entry.expected = new Template(source).render(all);
  } catch (e) {
    entry.error = e.message;
  }
  cases.push(entry);
}

for (const templateName of Object.keys(templates)) {
  const info = templates[templateName];
  for (const record of textRecords) {
    addCase(templateName, `${record.id}/as-is`, { messages: record.messages, add_generation_prompt: false });
    addCase(templateName, `${record.id}/no-system/prompt`, { messages: promptOnly(withoutSystem(record.messages)), add_generation_prompt: true });
    addCase(templateName, `${record.id}/system`, { messages: withSystem(record.messages), add_generation_prompt: false });
  }
  if (info.vision) {
    for (const record of imageRecords) {
      const messages = toContentList(record.messages);
      addCase(templateName, `${record.id}/images`, { messages, add_generation_prompt: false });
      addCase(templateName, `${record.id}/images/prompt/vision-id`, { messages: promptOnly(messages), add_generation_prompt: true, add_vision_id: true });
      addCase(templateName, `${record.id}/images/system`, { messages: withSystem(messages), add_generation_prompt: false });
    }
  }
  if (info.tools) {
    addCase(templateName, 'tools/question', { messages: toolConversation.slice(0, 2), tools, add_generation_prompt: true });
    addCase(templateName, 'tools/call-and-answer', { messages: toolConversation, tools, add_generation_prompt: false });
  }
  if (templateName.startsWith('llama-3')) {
    addCase(templateName, 'date-string', { messages: textRecords[0].messages, date_string: '01 Jan 2025', add_generation_prompt: false });
  }
}

fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'chat_template_cases.json'), JSON.stringify({ cases }, null, 1));
const errors = cases.filter((c) => c.error !== undefined).length;
console.log(`chat_template_cases.json: ${cases.length} cases (${errors} raise an exception)`);
