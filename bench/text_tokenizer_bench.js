// Times the reference tokenizers on the texts text_tokenizer_bench.cpp times odbatch on: Hugging
// Face's `tokenizers` (Rust, Node binding) for each tokenizer.json and js-tiktoken for each
// tiktoken encoding. Single thread (TOKENIZERS_PARALLELISM=false is set by the caller), timed
// inside node around the encoding only, in CPU time of the process (all its threads) and wall
// time: the best of REPEAT passes. Prints one JSON object.
// Usage: node text_tokenizer_bench.js NPM_PREFIX ORACLE_DIR REPEAT NAME...
'use strict';
const fs = require('fs');
const path = require('path');
const {createRequire} = require('module');

const [npmPrefix, oracleDir, repeatText, ...names] = process.argv.slice(2);
const oracleRequire = createRequire(path.join(path.resolve(npmPrefix), 'package.json'));
const hf = oracleRequire('tokenizers');
const {Tiktoken} = oracleRequire('js-tiktoken/lite');
const repeat = Number(repeatText);
const texts = fs.readFileSync(path.join(oracleDir, 'dataset.jsonl'), 'utf8')
                  .split('\n').filter((line) => line).map((line) => JSON.parse(line));
const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

async function best(pass) {
  let seconds = Infinity, wall = Infinity, tokens = 0;
  for (let i = 0; i < repeat; ++i) {
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    tokens = await pass();
    const used = process.cpuUsage(cpu);
    seconds = Math.min(seconds, (used.user + used.system) / 1e6);
    wall = Math.min(wall, Number(process.hrtime.bigint() - start) / 1e9);
  }
  return {seconds, wall, tokens};
}

async function main() {
  const results = {bytes, texts: texts.length};
  for (const name of names) {
    const hfFile = path.join(oracleDir, `${name}.json`);
    let timed;
    if (fs.existsSync(hfFile)) {
      const tokenizer = hf.Tokenizer.fromFile(hfFile);
      timed = await best(async () => {
        const encodings = await tokenizer.encodeBatch(texts, {addSpecialTokens: false});
        return encodings.reduce((sum, e) => sum + e.getLength(), 0);
      });
      timed.library = 'tokenizers (Hugging Face, Rust through Node)';
    } else {
      const ranks = oracleRequire(`js-tiktoken/ranks/${name}`);
      const encoding = new Tiktoken(ranks.default ?? ranks);
      timed = await best(async () => texts.reduce((sum, t) => sum + encoding.encode(t, 'all').length, 0));
      timed.library = 'js-tiktoken';
    }
    results[name] = timed;
  }
  console.log(JSON.stringify(results));
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
