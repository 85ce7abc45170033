// The reference for odbatch's chat tokenization through a model's Jinja template: real chat
// templates rendered by @huggingface/jinja on the dataset's conversations, supervised turns found
// by the rendering-diff rule of docs/chat-templates.md (implemented here on its own), images
// expanded the way Hugging Face's Qwen2-VL processor does it (each <|image_pad|> in the text
// becomes as many as the image has visual tokens), the text encoded by Hugging Face's
// `tokenizers` with tokenizer.json files the tokenizer oracle trained, and a token supervised
// when its byte range meets a supervised turn. Writes OUT_DIR/chat_tokenization_cases.jsonl, one
// case per line: {name, template, tokenizer, bos_token, eos_token, image_content,
// system_prompt, record, visual_tokens, ids, labels} or, where the template refuses, {..., error}.
// Tool use: the records of data/tool_use.jsonl (tools, tool calls and results, OpenAI's and
// LLaMA-Factory's ShareGPT layouts, per-record chat_template_kwargs), turned into the messages and
// variables transformers would pass (converted here on their own), through real tool-use
// templates, into OUT_DIR/tool_call_cases.jsonl with the same fields and template_variables.
// Usage: node chat_tokenization_oracle.js REPO_ROOT JINJA_NODE_MODULES TOKENIZERS_NODE_MODULES
//        TOKENIZER_DIR OUT_DIR
'use strict';
const fs = require('fs');
const path = require('path');

const [repoRoot, jinjaModules, tokenizersModules, tokenizerDir, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node chat_tokenization_oracle.js REPO_ROOT JINJA_NODE_MODULES ' +
                'TOKENIZERS_NODE_MODULES TOKENIZER_DIR OUT_DIR');
  process.exit(2);
}
const {Template} = require(path.resolve(jinjaModules, '@huggingface/jinja'));
const {Tokenizer} = require(path.resolve(tokenizersModules, 'tokenizers'));
// Resolved as a package (through its "exports"), from the folder the oracle installed it in.
const tokenizerRequire =
    require('module').createRequire(path.join(path.resolve(tokenizersModules), '..', 'package.json'));
const {Tiktoken} = tokenizerRequire('js-tiktoken/lite');

const IGNORE = -100;
const IMAGE_PAD = '<|image_pad|>';
const templateDir = path.join(repoRoot, 'tests/runtime/text/data/chat_templates');
// Templates with the tokenizer they are paired with (the trained ones: qwen2.json holds Qwen's
// special tokens, llama3.json Llama-3's) and the special tokens of their tokenizer_config.json.
const setups = [
  {template: 'qwen2-vl-7b-instruct', tokenizer: 'qwen2', bos_token: null, eos_token: '<|im_end|>',
   image_content: 'parts'},
  {template: 'qwen2.5-7b-instruct', tokenizer: 'qwen2', bos_token: null, eos_token: '<|im_end|>'},
  {template: 'chatml', tokenizer: 'qwen2', bos_token: '<s>', eos_token: '<|im_end|>'},
  {template: 'llama-3.1-8b-instruct', tokenizer: 'llama3', bos_token: '<|begin_of_text|>',
   eos_token: '<|eot_id|>'},
  {template: 'llama-3.2-3b-instruct', tokenizer: 'llama3', bos_token: '<|begin_of_text|>',
   eos_token: '<|eot_id|>'},
  {template: 'mistral-nemo-instruct-2407', tokenizer: 'qwen2', bos_token: '<s>', eos_token: '</s>'},
  {template: 'gemma-2-2b-it', tokenizer: 'qwen2', bos_token: '<bos>', eos_token: '<eos>'},
  // tiktoken ranks files (js-tiktoken's real cl100k_base and o200k_base): text only.
  {template: 'chatml', tokenizer: 'cl100k_base', bos_token: '<s>', eos_token: '<|im_end|>',
   tiktoken: true},
  {template: 'qwen2.5-7b-instruct', tokenizer: 'o200k_base', bos_token: null,
   eos_token: '<|im_end|>', tiktoken: true},
];

// strftime_now reads this clock (the C++ side pins the same): 2024-07-26T00:00:00Z.
process.env.TZ = 'UTC';
const RealDate = Date;
global.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(1721952000 * 1000);
    else super(...args);
  }
};

const roleOf = {human: 'user', user: 'user', gpt: 'assistant', assistant: 'assistant',
                system: 'system'};
const count = (text, part) => text.split(part).length - 1;
// Records whose conversation maps onto messages without any of the parser's conventions: string
// contents, and one <image> placeholder in the text per image.
function messagesOf(record) {
  const images = record.images ?? (record.image ? [record.image] : []);
  const raw = record.messages ?? record.conversations;
  if (!Array.isArray(raw)) return null;
  const messages = raw.map((m) => ({role: roleOf[m.role ?? m.from], content: m.content ?? m.value}));
  if (messages.some((m) => !m.role || typeof m.content !== 'string')) return null;
  const placeholders = messages.reduce((n, m) => n + count(m.content, '<image>'), 0);
  if (placeholders !== images.length) return null;
  return {messages, images};
}
function records(file, wanted, withImages) {
  const lines = fs.readFileSync(path.join(repoRoot, 'data/sft', file), 'utf8').split('\n')
      .filter((line) => line.trim());
  const chosen = [];
  for (const line of lines) {
    const parsed = messagesOf(JSON.parse(line));
    if (parsed && (parsed.images.length > 0) === withImages) chosen.push({line, ...parsed});
  }
  const step = Math.max(1, Math.floor(chosen.length / wanted));
  return chosen.filter((_, i) => i % step === 0).slice(0, wanted);
}
// Tool-use templates, each with configured template variables (as [tokenizer]
// template_variables sets them) beside the records' own.
const toolSetups = [
  {template: 'llama-3.1-8b-instruct', tokenizer: 'llama3', bos_token: '<|begin_of_text|>',
   eos_token: '<|eot_id|>', template_variables: {}},
  {template: 'llama-3.2-3b-instruct', tokenizer: 'llama3', bos_token: '<|begin_of_text|>',
   eos_token: '<|eot_id|>', template_variables: {tools_in_user_message: false}},
  {template: 'qwen2.5-7b-instruct', tokenizer: 'qwen2', bos_token: null, eos_token: '<|im_end|>',
   template_variables: {}},
  {template: 'mistral-nemo-instruct-2407', tokenizer: 'qwen2', bos_token: '<s>', eos_token: '</s>',
   template_variables: {}},
  {template: 'hermes-3-llama-3.1-70b-tool_use', tokenizer: 'llama3',
   bos_token: '<|begin_of_text|>', eos_token: '<|im_end|>', template_variables: {}},
];

// A tool-use record as transformers' apply_chat_template would be called with it: messages as
// the record has them (a tool call's arguments given as JSON text decoded, a tool-calling
// assistant message without content given None); LLaMA-Factory's function_call and observation
// turns become an assistant message with that tool call and a tool message, its `tools` text the
// list it holds, each bare function wrapped as {type: 'function', function}.
function toolConversation(record) {
  const decoded = (call) => (call.function && typeof call.function.arguments === 'string'
      ? {...call, function: {...call.function, arguments: JSON.parse(call.function.arguments)}}
      : call);
  let messages;
  let tools = record.tools ?? null;
  if (record.messages) {
    messages = record.messages.map((m) => {
      const message = {...m};
      if (Array.isArray(m.tool_calls)) message.tool_calls = m.tool_calls.map(decoded);
      if (m.role === 'assistant' && (m.content === undefined || m.content === null) &&
          message.tool_calls?.length)
        message.content = null;
      return message;
    });
  } else {
    const roles = {human: 'user', user: 'user', gpt: 'assistant', assistant: 'assistant',
                   system: 'system', observation: 'tool', tool: 'tool'};
    messages = record.conversations.map((turn) => (turn.from === 'function_call'
        ? {role: 'assistant', content: null,
           tool_calls: [decoded({type: 'function', function: JSON.parse(turn.value)})]}
        : {role: roles[turn.from], content: turn.value}));
    if (typeof tools === 'string') tools = tools.trim() ? JSON.parse(tools) : null;
    if (tools) tools = tools.map((tool) => ('type' in tool ? tool : {type: 'function', function: tool}));
  }
  if (Array.isArray(tools) && tools.length === 0) tools = null;
  return {messages, tools, kwargs: record.chat_template_kwargs ?? {}};
}
const toolRecords = fs.readFileSync(path.join(repoRoot, 'tests/runtime/text/data/tool_use.jsonl'),
                                    'utf8').split('\n').filter((line) => line.trim());

const textRecords = [...records('sharegpt.jsonl', 10, false), ...records('openai.jsonl', 10, false),
                     ...records('mixed.jsonl', 10, false)];
const imageRecords = records('sharegpt.jsonl', 16, true);

// As odbatch shows a conversation to a template: a message with images as content parts (or
// with each <image> replaced by the vision tokens, image_content "text"), others as strings.
function templateMessages(messages, imageContent, systemPrompt) {
  const shown = messages.map((m) => {
    if (!m.content.includes('<image>')) return m;
    if (imageContent !== 'parts')
      return {role: m.role, content: m.content.split('<image>').join(
          '<|vision_start|>' + IMAGE_PAD + '<|vision_end|>')};
    const content = [];
    m.content.split('<image>').forEach((piece, i) => {
      if (i > 0) content.push({type: 'image'});
      if (piece) content.push({type: 'text', text: piece});
    });
    return {role: m.role, content};
  });
  if (systemPrompt !== null && shown[0].role !== 'system')
    shown.unshift({role: 'system', content: systemPrompt});
  return shown;
}

const bytes = (text) => Buffer.byteLength(text);
// The rendering-diff rule: byte ranges of the assistant turns in the whole rendering.
function renderSupervised(template, variables, messages) {
  const render = (list, prompt) =>
    template.render({...variables, messages: list, add_generation_prompt: prompt});
  const whole = render(messages, false);
  const spans = [];
  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    const prompt = render(messages.slice(0, i), true);
    const answered = render(messages.slice(0, i + 1), false);
    if (!whole.startsWith(answered) || !answered.startsWith(prompt))
      throw new Error(`message ${i}: not a prefix of the whole rendering`);
    let end = answered.length;
    while (end > prompt.length && ' \t\n\r'.includes(answered[end - 1])) --end;
    if (end > prompt.length) spans.push([bytes(answered.slice(0, prompt.length)),
                                         bytes(answered.slice(0, end))]);
  });
  return {text: whole, spans};
}

// Each <|image_pad|> becomes visual[i] of them, as the processor expands the text; the spans
// move with the bytes inserted before them.
function expandImages(text, spans, visual) {
  const pieces = text.split(IMAGE_PAD);
  if (pieces.length - 1 !== visual.length)
    throw new Error(`the template wrote ${pieces.length - 1} image tokens for ${visual.length} images`);
  let expanded = pieces[0];
  let moved = spans.map((s) => s.slice());
  let original = bytes(pieces[0]);
  for (let i = 0; i < visual.length; ++i) {
    const inserted = (visual[i] - 1) * bytes(IMAGE_PAD);
    moved = moved.map(([b, e]) => [b > original ? b + inserted : b, e > original ? e + inserted : e]);
    expanded += IMAGE_PAD.repeat(visual[i]) + pieces[i + 1];
    original += bytes(IMAGE_PAD) + bytes(pieces[i + 1]);
  }
  return {text: expanded, spans: moved};
}

// Byte offsets of each code point boundary: the binding reports offsets in code points.
function byteOffsets(text) {
  const offsets = [0];
  for (const character of text) offsets.push(offsets.at(-1) + bytes(character));
  return offsets;
}

// A js-tiktoken encoding behind the interface used below: ids, and offsets in code points from
// each token's bytes (tiktoken's tokens are the text's bytes, in order).
function tiktokenTokenizer(name) {
  const ranks = tokenizerRequire(`js-tiktoken/ranks/${name}`);
  const encoding = new Tiktoken(ranks.default ?? ranks);
  const specials = (ranks.default ?? ranks).special_tokens;
  const specialBytes = new Map(Object.entries(specials).map(([t, id]) => [id, Buffer.from(t)]));
  return {
    tokenToId: (token) => specials[token],
    encodeBatch: async ([text]) => {
      const ids = encoding.encode(text, 'all');
      const utf8 = Buffer.from(text);
      // Code point index of each byte offset that starts a code point.
      const pointAt = new Map();
      let point = 0;
      for (let b = 0; b <= utf8.length; ++b)
        if (b === utf8.length || (utf8[b] & 0xc0) !== 0x80) pointAt.set(b, point++);
      let at = 0;
      const offsets = ids.map((id) => {
        const length = (specialBytes.get(id) ?? encoding.textMap.get(id)).length;
        const range = [at, at + length];
        at += length;
        return range;
      });
      // A token ending inside a code point spans to its end; one starting inside, from its start.
      const floor = (b) => { while (!pointAt.has(b)) --b; return pointAt.get(b); };
      const ceil = (b) => { while (!pointAt.has(b)) ++b; return pointAt.get(b); };
      return [{getIds: () => ids, getOffsets: () => offsets.map(([b, e]) => [floor(b), ceil(e)])}];
    },
  };
}

async function main() {
  const tokenizers = {};
  for (const setup of setups.filter((s) => s.tiktoken))
    tokenizers[setup.tokenizer] = tiktokenTokenizer(setup.tokenizer);
  for (const name of new Set(setups.filter((s) => !s.tiktoken).map((s) => s.tokenizer))) {
    const json = JSON.parse(fs.readFileSync(path.join(tokenizerDir, `${name}.json`), 'utf8'));
    // Untrimmed offsets: trim_offsets narrows ranges around spaces and changes no id.
    const untrimmed = JSON.parse(JSON.stringify(json),
                                 (key, value) => (key === 'trim_offsets' ? false : value));
    tokenizers[name] = Tokenizer.fromString(JSON.stringify(untrimmed));
  }
  const lines = [];
  for (const setup of setups) {
    const source = fs.readFileSync(path.join(templateDir, setup.template + '.jinja'), 'utf8');
    const template = new Template(source);
    const tokenizer = tokenizers[setup.tokenizer];
    const imagePad = tokenizer.tokenToId(IMAGE_PAD);
    // transformers passes the special tokens the tokenizer has, and tools/documents as None.
    const variables = {tools: null, documents: null};
    if (setup.bos_token !== null) variables.bos_token = setup.bos_token;
    if (setup.eos_token !== null) variables.eos_token = setup.eos_token;
    const imageContent = setup.image_content ?? 'text';
    const usable = imagePad !== undefined && imagePad !== null;
    const chosen = usable ? [...textRecords, ...imageRecords] : textRecords;
    for (const [index, record] of chosen.entries()) {
      for (const systemPrompt of [null, 'You are a careful assistant.']) {
        const visual = record.images.map((_, i) => 2 + ((index + i * 3) % 5));
        const entry = {name: `${setup.template}/${index}/${systemPrompt === null ? 'as-is' : 'system'}`,
                       template: setup.template + '.jinja',
                       tokenizer: setup.tokenizer + (setup.tiktoken ? '.tiktoken' : '.json'),
                       tiktoken_preset: setup.tiktoken ? setup.tokenizer : null,
                       bos_token: setup.bos_token, eos_token: setup.eos_token,
                       image_content: imageContent, system_prompt: systemPrompt,
                       record: record.line, visual_tokens: visual};
        try {
          const messages = templateMessages(record.messages, imageContent, systemPrompt);
          const rendered = renderSupervised(template, variables, messages);
          const {text, spans} = expandImages(rendered.text, rendered.spans, visual);
          const [encoding] = await tokenizer.encodeBatch([text], {addSpecialTokens: false});
          const at = byteOffsets(text);
          entry.ids = encoding.getIds();
          entry.labels = encoding.getOffsets().map(([b, e], i) => {
            const [begin, end] = [at[b], at[e]];
            const id = entry.ids[i];
            if (id === imagePad || end <= begin) return IGNORE;
            return spans.some(([sb, se]) => begin < se && end > sb) ? id : IGNORE;
          });
        } catch (error) {
          entry.error = error.message;
        }
        lines.push(JSON.stringify(entry));
      }
    }
  }
  const toolLines = [];
  for (const setup of toolSetups) {
    const source = fs.readFileSync(path.join(templateDir, setup.template + '.jinja'), 'utf8');
    const template = new Template(source);
    const tokenizer = tokenizers[setup.tokenizer];
    for (const line of toolRecords) {
      const record = JSON.parse(line);
      const entry = {name: `tools/${setup.template}/${record.id}`, template: setup.template + '.jinja',
                     tokenizer: setup.tokenizer + '.json', tiktoken_preset: null,
                     bos_token: setup.bos_token, eos_token: setup.eos_token, image_content: 'text',
                     system_prompt: null, template_variables: setup.template_variables,
                     record: line, visual_tokens: []};
      try {
        const {messages, tools, kwargs} = toolConversation(record);
        const variables = {tools, documents: null, ...setup.template_variables};
        if (setup.bos_token !== null) variables.bos_token = setup.bos_token;
        if (setup.eos_token !== null) variables.eos_token = setup.eos_token;
        Object.assign(variables, kwargs);
        const {text, spans} = renderSupervised(template, variables, messages);
        const [encoding] = await tokenizer.encodeBatch([text], {addSpecialTokens: false});
        const at = byteOffsets(text);
        entry.ids = encoding.getIds();
        entry.labels = encoding.getOffsets().map(([b, e], i) => {
          const [begin, end] = [at[b], at[e]];
          if (end <= begin) return IGNORE;
          return spans.some(([sb, se]) => begin < se && end > sb) ? entry.ids[i] : IGNORE;
        });
      } catch (error) {
        entry.error = error.message;
      }
      toolLines.push(JSON.stringify(entry));
    }
  }
  fs.mkdirSync(outDir, {recursive: true});
  fs.writeFileSync(path.join(outDir, 'chat_tokenization_cases.jsonl'), lines.join('\n') + '\n');
  fs.writeFileSync(path.join(outDir, 'tool_call_cases.jsonl'), toolLines.join('\n') + '\n');
  const toolRefused = toolLines.filter((l) => JSON.parse(l).error !== undefined).length;
  console.log(`tool_call_cases.jsonl: ${toolLines.length} cases (${toolRefused} refused)`);
  const refused = lines.filter((l) => JSON.parse(l).error !== undefined).length;
  console.log(`chat_tokenization_cases.jsonl: ${lines.length} cases (${refused} refused)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
