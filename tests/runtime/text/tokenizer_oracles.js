// Writes the reference tokenizers' answers that the oracle tests compare odbatch against.
// Usage: node tokenizer_oracles.js NPM_PREFIX SOURCE_DIR OUT_DIR
//
// With Hugging Face's `tokenizers` (its Rust library through Node bindings) it trains byte-level
// BPE tokenizer.json files on the dataset's text in five configurations (Qwen2-, Llama-3-,
// GPT-2- and Mistral-Nemo-style, and one with every Split behaviour), and with `js-tiktoken` it writes cl100k_base and o200k_base as
// tiktoken ranks files. For every tokenizer it then writes the ids of each dataset text and of
// an adversarial string set, and the reference decode of the latter. Output (OUT_DIR):
//   dataset.jsonl, adversarial.jsonl        one JSON string per line: the texts
//   <name>.json | <name>.tiktoken           the tokenizer (tokenizer.json or ranks file)
//   <name>.specials.json                    tiktoken only: {"name": id}
//   <name>.dataset.jsonl                    per text: [ids]
//   <name>.adversarial.jsonl                per text: {"ids", "ids_with_special",
//                                           "ids_specials_as_text", "decoded",
//                                           "decoded_skipping_special" (tokenizer.json only)}
//   <name>.{dataset,adversarial}.offsets.jsonl
//                                           tokenizer.json only, per text: {"offsets": each
//                                           token's [begin, end) flattened, in bytes of the
//                                           UTF-8 text, "changed": [begin, end) of each
//                                           chunk (see normalizedChunks) that normalization
//                                           changes, flattened}
'use strict';
const fs = require('fs');
const path = require('path');
const {createRequire} = require('module');

const [npmPrefix, sourceDir, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node tokenizer_oracles.js NPM_PREFIX SOURCE_DIR OUT_DIR');
  process.exit(2);
}
const oracleRequire = createRequire(path.join(path.resolve(npmPrefix), 'package.json'));
const hf = oracleRequire('tokenizers');
const {Tiktoken} = oracleRequire('js-tiktoken/lite');
fs.mkdirSync(outDir, {recursive: true});
const out = (name) => path.join(outDir, name);
const writeLines = (name, values) =>
  fs.writeFileSync(out(name), values.map((v) => JSON.stringify(v)).join('\n') + '\n');

// Every message text of data/sft/*.jsonl (ShareGPT "value" or OpenAI "content"), each once.
function datasetTexts() {
  const dir = path.join(sourceDir, 'data', 'sft');
  const texts = new Set();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const record = JSON.parse(line);
      for (const message of record.conversations || record.messages || []) {
        const content = message.value ?? message.content;
        if (typeof content === 'string') texts.add(content);
        else if (Array.isArray(content))
          for (const part of content) if (part.type === 'text') texts.add(part.text);
      }
    }
  }
  return [...texts].sort();
}

// Strings that stress splitting, merging and added-token matching.
function adversarialTexts(specials) {
  const atoms = [
    // one or two characters of each Unicode general category
    'A', 'Z', 'a', 'z', '\u01C5', '\u02B0', '\u4E2D', '\u05D0', '\u0301', '\u0903', '\u20DD',
    '\u0663', '7', '\u216B', '\u00BD', '_', '\u203F', '\u2013', '(', '\u300C', ')', '\u300D',
    '\u00AB', '\u2018', '\u00BB', '\u2019', '!', '\u3002', '+', '\u2211', '$', '\u20AC', '^',
    '\u02DC', '\u00A9', '\u2603', '\u00A0', '\u2003', '\u3000', '\u2028', '\u2029', '\t', '\u0001',
    '\u007F', '\u0085', '\u200B', '\u200D', '\uFEFF', '\u00AD', '\uE000', '\u0378', '\uFFFD',
    '\uFFFF', '\u{10FFFF}', '\u{1D400}', '\u{20000}',
    // emoji: skin tones, ZWJ families, flags, keycaps, variation selectors
    '\u{1F44D}\u{1F3FD}', '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}',
    '\u{1F3F3}\uFE0F\u200D\u{1F308}', '\u{1F1E9}\u{1F1EA}', '1\uFE0F\u20E3', '\u2764\uFE0F',
    // CJK, Hangul, RTL, Indic, Thai
    '\u65E5\u672C\u8A9E\u306E\u30C6\u30AD\u30B9\u30C8', '\u4E2D\u6587\u6587\u672C\u3002',
    '\uD55C\uAD6D\uC5B4', '\u0645\u0631\u062D\u0628\u0627', '\u0939\u093F\u0928\u094D\u0926\u0940',
    '\u0E20\u0E32\u0E29\u0E32\u0E44\u0E17\u0E22',
    // combining marks: decomposed and stacked (NFC changes these)
    'e\u0301', 'a\u0308\u0304', 'Z\u0351\u036B\u0343\u036A\u0302', 'A\u030A', '\u1100\u1161\u11A8',
    // digits and numbers
    '1234567890', '0000000', '\u0663\u0664\u0665\u0666', '3.14159', '1,000,000', '1e-9',
    // white space runs of every kind
    ' ', '  ', '   ', '\t\t', '\n', '\n\n\n', '\r\n', ' \n ', '\u00A0\u00A0', '\u3000 \u3000',
    '\u2003\t\u2009', '\v\f', '\r', ' \u0085 ',
    // contractions and punctuation runs
    "I'm", "DON'T", "it'S", "'ll've", "'re", "''", '...', '?!?!', '--', '->', '/*', '</s>',
    'https://example.org/a?b=c', '{"k": [1, 2]}', 'def f(x):\n    return x',
    // special and added tokens, their prefixes and near misses
    ...specials, '<|', '|>', '<|im_start', 'im_end|>', '<|endoftext', '<<|im_start|>>',
  ];
  const texts = [...atoms];
  for (const atom of atoms) texts.push(`x${atom}y`, ` ${atom}`, `${atom} `, atom + atom + atom);
  // Every kind of character beside the tokens whose matching depends on their neighbours:
  // single_word ([SW]) and lstrip/rstrip (<mask>).
  for (const atom of atoms)
    texts.push(`${atom}[SW]`, `[SW]${atom}`, `${atom}<mask>${atom}`, `${atom} <mask> ${atom}`);
  for (const special of specials)
    texts.push(`a${special}b`, ` ${special} `, `${special}${special}`, `text ${special}\nmore`,
               `  ${special}  x`, `word${special}word`);
  // Deterministic random mixtures of the atoms.
  let state = 12345;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let i = 0; i < 400; ++i) {
    let text = '';
    const length = 1 + Math.floor(next() * 12);
    for (let k = 0; k < length; ++k) text += atoms[Math.floor(next() * atoms.length)];
    texts.push(text);
  }
  texts.push('9'.repeat(1000), ' '.repeat(500) + 'x', '\n'.repeat(300), 'ab'.repeat(2000),
             '\u4E2D'.repeat(700), '\u{1F600}'.repeat(300),
             // Runs that cross the windows a match call starts with (64 bytes, then doubled),
             // some of them in the middle of a multi-byte character or of a lookahead.
             ' \u3000'.repeat(100) + 'x', 'a'.repeat(70) + ' '.repeat(70) + "'s",
             '\u00E9'.repeat(63) + '\n'.repeat(3) + ' '.repeat(61) + '\u2003y');
  return texts;
}

const QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const NEMO_PATTERN = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const byteLevel = (fields) =>
  ({type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false, ...fields});
const split = (pattern) =>
  ({type: 'Split', pattern: {Regex: pattern}, behavior: 'Isolated', invert: false});
const token = (content, fields = {}) => ({content, single_word: false, lstrip: false,
  rstrip: false, normalized: false, special: true, ...fields});

// The three tokenizer.json configurations, as the real models write theirs.
const HF_CONFIGS = {
  qwen2: {
    normalizer: {type: 'NFC'},
    pre_tokenizer: {type: 'Sequence', pretokenizers: [split(QWEN2_PATTERN), byteLevel({})]},
    post_processor: byteLevel({}),
    ignore_merges: false,
    merges_as_strings: true,
    added: ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|object_ref_start|>',
            '<|vision_start|>', '<|vision_end|>', '<|vision_pad|>', '<|image_pad|>',
            '<|video_pad|>'].map((c) => token(c))
        .concat([token('<tool_call>', {special: false}), token('</tool_call>', {special: false})]),
  },
  llama3: {
    normalizer: null,
    pre_tokenizer: {type: 'Sequence',
                    pretokenizers: [split(LLAMA3_PATTERN), byteLevel({trim_offsets: true})]},
    post_processor: 'template',
    ignore_merges: true,
    merges_as_strings: false,
    added: ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>',
            '<|eot_id|>', '<|python_tag|>']
        .concat(Array.from({length: 12}, (_, i) => `<|reserved_special_token_${i}|>`))
        .map((c) => token(c)),
  },
  // GPT-2's own pre-tokenizer (ByteLevel with its regex and a prefix space), and added tokens
  // with every matching flag: lstrip/rstrip, single_word, normalized (NFC) content.
  gpt2: {
    normalizer: {type: 'Sequence', normalizers: [{type: 'NFC'}]},
    pre_tokenizer: byteLevel({add_prefix_space: true, use_regex: true, trim_offsets: true}),
    post_processor: byteLevel({trim_offsets: true}),
    ignore_merges: false,
    merges_as_strings: true,
    added: [token('<|endoftext|>'), token('<mask>', {lstrip: true, rstrip: true}),
            token('[SW]', {single_word: true, special: false}),
            token('caf\u00E9', {normalized: true, special: false}),
            token('\u00F1and\u00FA', {special: false})],
  },
  // Mistral-Nemo's (Tekken) split: case-aware words, single digits.
  nemo: {
    normalizer: null,
    pre_tokenizer: {type: 'Sequence',
                    pretokenizers: [split(NEMO_PATTERN), byteLevel({trim_offsets: true})]},
    post_processor: null,
    ignore_merges: false,
    merges_as_strings: false,
    added: ['<unk>', '<s>', '</s>', '[INST]', '[/INST]', '[IMG]', '[IMG_BREAK]', '[IMG_END]']
        .map((c) => token(c)),
  },
  // Every Split behaviour, invert, a String pattern, NFKC, ByteLevel's prefix space without its
  // regex, and RobertaProcessing's <s> A </s>.
  behaviours: {
    normalizer: {type: 'NFKC'},
    pre_tokenizer: {type: 'Sequence', pretokenizers: [
      {type: 'Split', pattern: {String: ' '}, behavior: 'MergedWithNext', invert: false},
      {type: 'Split', pattern: {Regex: '[,.;:]'}, behavior: 'MergedWithPrevious', invert: false},
      {type: 'Split', pattern: {Regex: '\\p{N}{4,}'}, behavior: 'Removed', invert: false},
      {type: 'Split', pattern: {Regex: '\\p{L}+'}, behavior: 'Contiguous', invert: true},
      {type: 'Split', pattern: {Regex: '[()\\[\\]]'}, behavior: 'Isolated', invert: false},
      byteLevel({add_prefix_space: true})]},
    post_processor: 'roberta',
    ignore_merges: false,
    merges_as_strings: true,
    added: [token('<s>'), token('</s>'), token('<pad>')],
  },
};

// A function from code point offsets in `text` to byte offsets in its UTF-8: the reference
// reports offsets in code points (its Node binding converts Rust's byte offsets to chars).
function codePointsToBytes(text) {
  if (Buffer.byteLength(text) === text.length) return (offset) => offset;  // ASCII
  const bytes = [0];
  for (const character of text) bytes.push(bytes.at(-1) + Buffer.byteLength(character));
  return (offset) => bytes[offset];
}

// The byte ranges of the chunks of `text` that each begin at an ASCII character (the first may
// begin elsewhere) and whose normal form under `form` differs from them; normalization never
// acts across such chunks, so these are the parts of the text it changes.
function changedChunks(text, form) {
  // A text equal to its normal form has no changed chunk (were one changed, the concatenation
  // would differ), and if that ever failed the comparison would be stricter, not looser.
  if (!form || text.normalize(form) === text) return [];
  const changed = [];
  let begin = 0, chunk = '', bytes = 0;
  const flush = () => {
    if (chunk && chunk.normalize(form) !== chunk) changed.push(begin, bytes);
    begin = bytes;
    chunk = '';
  };
  for (const character of text) {
    if (character.codePointAt(0) < 0x80) flush();
    chunk += character;
    bytes += Buffer.byteLength(character);
  }
  flush();
  return changed;
}

// The Unicode normal form a normalizer configuration applies (one form at most here).
function normalForm(normalizer) {
  if (!normalizer) return null;
  if (normalizer.type === 'Sequence') {
    const forms = normalizer.normalizers.map(normalForm).filter((f) => f);
    if (forms.length > 1) throw new Error('one normal form at most');
    return forms[0] ?? null;
  }
  return normalizer.type;
}

// The same tokenizer reporting untrimmed offsets: trim_offsets (ByteLevel's, the processors')
// narrows ranges to leave out spaces and changes no id; odbatch's ranges include them.
function untrimmed(json) {
  return JSON.parse(JSON.stringify(json), (key, value) => (key === 'trim_offsets' ? false : value));
}

async function hfTokenizers(dataset) {
  const trainFile = out('train.txt');
  fs.writeFileSync(trainFile, dataset.join('\n'));
  const alphabet = hf.byteLevelAlphabet();
  const results = [];
  for (const [name, config] of Object.entries(HF_CONFIGS)) {
    const base = {
      version: '1.0', truncation: null, padding: null, added_tokens: [],
      normalizer: config.normalizer, pre_tokenizer: config.pre_tokenizer,
      post_processor: typeof config.post_processor === 'string' ? null : config.post_processor,
      decoder: byteLevel({trim_offsets: true}),
      model: {type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
              end_of_word_suffix: null, fuse_unk: false, byte_fallback: false,
              ignore_merges: config.ignore_merges, vocab: {}, merges: []},
    };
    const trainer = hf.Tokenizer.fromString(JSON.stringify(base));
    trainer.train([trainFile]);
    const savedFile = out(`${name}.trained.json`);
    trainer.save(savedFile);
    const json = JSON.parse(fs.readFileSync(savedFile, 'utf8'));
    fs.unlinkSync(savedFile);
    // The trainer keeps only the bytes it saw; a byte-level vocabulary has all 256.
    const vocab = json.model.vocab;
    let nextId = Object.keys(vocab).length;
    for (const symbol of alphabet) if (!(symbol in vocab)) vocab[symbol] = nextId++;
    json.model.merges = json.model.merges.map((m) => (Array.isArray(m) ? m : m.split(' ')));
    if (config.merges_as_strings) json.model.merges = json.model.merges.map((m) => m.join(' '));
    json.added_tokens = config.added.map((t) => ({id: nextId++, ...t}));
    if (config.post_processor === 'template') {
      const bos = json.added_tokens[0];
      json.post_processor = {type: 'Sequence', processors: [
        byteLevel({trim_offsets: true}),
        {type: 'TemplateProcessing',
         single: [{SpecialToken: {id: bos.content, type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}],
         pair: [{SpecialToken: {id: bos.content, type_id: 0}}, {Sequence: {id: 'A', type_id: 0}},
                {SpecialToken: {id: bos.content, type_id: 1}}, {Sequence: {id: 'B', type_id: 1}}],
         special_tokens: {[bos.content]: {id: bos.content, ids: [bos.id], tokens: [bos.content]}}},
      ]};
    }
    if (config.post_processor === 'roberta') {
      const [cls, sep] = json.added_tokens;
      json.post_processor = {type: 'RobertaProcessing', sep: [sep.content, sep.id],
                             cls: [cls.content, cls.id], trim_offsets: true,
                             add_prefix_space: true};
    }
    const text = JSON.stringify(json);
    fs.writeFileSync(out(`${name}.json`), text);
    // Special tokens written in the text read as plain text (split_special_tokens, which the
    // JSON cannot express): the same tokenizer with its special tokens renamed to text that never
    // occurs, so that every id stays where it was.
    const withoutSpecials = {...json, added_tokens: json.added_tokens.map((t) =>
      (t.special ? {...t, content: `\u0000never${t.id}`} : t))};
    results.push({name, tokenizer: hf.Tokenizer.fromString(text),
                  plain: hf.Tokenizer.fromString(JSON.stringify(withoutSpecials)),
                  untrimmed: hf.Tokenizer.fromString(JSON.stringify(untrimmed(json))),
                  form: normalForm(config.normalizer),
                  specials: config.added.map((t) => t.content)});
  }
  return results;
}

function tiktokenEncodings() {
  return ['cl100k_base', 'o200k_base'].map((name) => {
    const ranks = oracleRequire(`js-tiktoken/ranks/${name}`);
    const encoding = new Tiktoken(ranks.default ?? ranks);
    const lines = [];
    for (const [rank, bytes] of encoding.textMap)
      lines.push(`${Buffer.from(bytes).toString('base64')} ${rank}`);
    fs.writeFileSync(out(`${name}.tiktoken`), lines.join('\n') + '\n');
    const specials = (ranks.default ?? ranks).special_tokens;
    fs.writeFileSync(out(`${name}.specials.json`), JSON.stringify(specials));
    return {name, encoding, specials: Object.keys(specials)};
  });
}

async function main() {
  const dataset = datasetTexts();
  writeLines('dataset.jsonl', dataset);
  const hfResults = await hfTokenizers(dataset);
  const tiktokens = tiktokenEncodings();
  const allSpecials = [...new Set([...hfResults, ...tiktokens].flatMap((t) => t.specials))];
  const adversarial = adversarialTexts(allSpecials);
  writeLines('adversarial.jsonl', adversarial);

  for (const {name, tokenizer, plain, untrimmed: withOffsets, form} of hfResults) {
    const encodeAll = async (encoder, texts, addSpecialTokens) =>
      (await encoder.encodeBatch(texts, {addSpecialTokens})).map((e) => e.getIds());
    const writeOffsets = async (set, texts) => {
      const encodings = await withOffsets.encodeBatch(texts, {addSpecialTokens: false});
      writeLines(`${name}.${set}.offsets.jsonl`, encodings.map((encoding, i) => {
        const bytes = codePointsToBytes(texts[i]);
        const offsets = [];
        for (const [begin, end] of encoding.getOffsets()) offsets.push(bytes(begin), bytes(end));
        return {offsets, changed: changedChunks(texts[i], form)};
      }));
      return encodings;
    };
    // The dataset's ids come from the same encodings (trim_offsets changes no id), which keeps
    // the fixture fast; the adversarial ids below come from the tokenizer as written.
    const datasetEncodings = await writeOffsets('dataset', dataset);
    await writeOffsets('adversarial', adversarial);
    writeLines(`${name}.dataset.jsonl`, datasetEncodings.map((e) => e.getIds()));
    const ids = await encodeAll(tokenizer, adversarial, false);
    const withSpecial = await encodeAll(tokenizer, adversarial, true);
    const specialsAsText = await encodeAll(plain, adversarial, false);
    const decoded = await tokenizer.decodeBatch(ids, false);
    const decodedWithoutSpecial = await tokenizer.decodeBatch(ids, true);
    writeLines(`${name}.adversarial.jsonl`, adversarial.map((_, i) =>
      ({ids: ids[i], ids_with_special: withSpecial[i], ids_specials_as_text: specialsAsText[i],
        decoded: decoded[i], decoded_skipping_special: decodedWithoutSpecial[i]})));
  }
  for (const {name, encoding} of tiktokens) {
    writeLines(`${name}.dataset.jsonl`, dataset.map((t) => encoding.encode(t, 'all')));
    writeLines(`${name}.adversarial.jsonl`, adversarial.map((t) => {
      const ids = encoding.encode(t, 'all');
      return {ids, ids_with_special: ids, ids_specials_as_text: encoding.encode(t, [], []),
              decoded: encoding.decode(ids)};
    }));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
