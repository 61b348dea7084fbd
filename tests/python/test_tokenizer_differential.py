"""The native tokenizer against HF tokenizers: small tokenizers of every kind the native code reads, trained here
with HF tokenizers, compared on a hostile corpus and on random strings."""

import json
import random
import unicodedata

import pytest

import prefix_scorer

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# What the tokenizers are trained on: enough of every script for merges beyond single bytes.
TRAINING = [
    "The quick brown fox jumps over the lazy dog. It's 2024; they'll say we're done, I'd think.",
    "def encode(text: str) -> list[int]:\n    return [ord(c) for c in text]  # 42\r\n",
    "https://example.com/path?query=1&x=2 user@example.org 3.14159 1,000,000 -17 0x1F",
    "日本語のテキストは空白なしで書かれます。中文文本也没有空格。한국어 문장도 있습니다.",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ", "العربية تكتب من اليمين إلى اليسار", "עברית נכתבת מימין לשמאל",
    "हिन्दी देवनागरी लिपि में लिखी जाती है। संस्कृतम्", "Ünïcödé café naïve résumé Straße ÅNGSTRÖM",
    "emoji 👍🏽 👨‍👩‍👧‍👦 🇫🇷 🇯🇵 ❤️ 🙂", "tabs\tand\t\tspaces   and\nnewlines\n\n\r\n",
] * 20

CORPUS = [
    "",
    " ",
    "Hello world",
    " Hello world ",
    "日本語のテキストは空白なしで書かれます。",
    "中文文本也没有空格，标点符号：“引号”。",
    "ภาษาไทยไม่มีการเว้นวรรค",
    "العربية تكتب من اليمين إلى اليسار ١٢٣",
    "עברית: שלום עולם",
    "हिन्दी देवनागरी लिपि",
    "e\u0301 versus \u00e9, A\u030a versus \u00c5, \ufb01 ligature, \u2460 circled, \uff21 fullwidth",
    "👍🏽👍🏿 skin tones, 👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 🇫🇷🇯🇵 regional indicators",
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom and\u00a0nbsp\u202fnarrow",
    "runs    of     spaces\t\ttabs\n\n\nnewlines\r\n\r\nCRLF \n \n",
    "   leading and trailing   ",
    "\n",
    "\t",
    "digits 0 12 345 6789 1234567890 3.14159 1,000,000 -42 +7 1e-9",
    "def f(x):\n    return x ** 2  # square\n\nclass A:\n\tpass\n",
    "if (a && b || !c) { return a[i] << 2; } // C++ `code` $var @decorator",
    "https://example.com/a/b?c=d&e=f#g mailto:someone@example.org",
    "<|begin_of_text|>literal special token in text<|end_of_text|>",
    "<s>llama two</s> [MASK] <rs>  word word? sword words Hello hello",
    "Supercalifragilisticexpialidocious" * 4,
    "a" * 300,
    "I'm, you're, they've, we'll, he'd, it's, O'NEIL'S",
    "Ünïcödé café naïve résumé Straße ÅNGSTRÖM ǅ ǈ",
    "\u0000 nul \u0007 bell \u001b escape \u007f delete",
    "mixed日本english中文mix123ไทย",
]


def byte_level_bpe(split):
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(split), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer, pre_tokenizers.ByteLevel.alphabet()


def gpt2():
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    return tokenizer, pre_tokenizers.ByteLevel.alphabet()


def byte_fallback(pre_tokenizer=None, normalizer=None, decoder=None):
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    if normalizer is not None:
        tokenizer.normalizer = normalizer
    if pre_tokenizer is not None:
        tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoder or decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return tokenizer, []


def llama2():
    return byte_fallback(normalizer=normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]))


def metaspace(scheme, split):
    return byte_fallback(pre_tokenizer=pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=scheme, split=split),
                         decoder=decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(
                             replacement="▁", prepend_scheme=scheme, split=split)]))


def normalized_digits():
    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer, pre_tokenizers.ByteLevel.alphabet()


def nfc_qwen():
    tokenizer, alphabet = byte_level_bpe(QWEN2_SPLIT)
    tokenizer.normalizer = normalizers.NFC()
    return tokenizer, alphabet


KINDS = {
    "llama3": lambda: byte_level_bpe(LLAMA3_SPLIT),
    "qwen2-nfc": nfc_qwen,
    "gpt2": gpt2,
    "llama2": llama2,
    "metaspace-first": lambda: metaspace("first", True),
    "metaspace-always": lambda: metaspace("always", True),
    "metaspace-never": lambda: metaspace("never", False),
    "nfkc-lowercase-digits": normalized_digits,
}

SPECIAL = ["<unk>", "<s>", "</s>", "<|begin_of_text|>", "<|end_of_text|>"]


def with_added_tokens(tokenizer):
    """Added tokens of every flavour, and a template that puts BOS first (and EOS last where there is one)."""
    tokenizer.add_special_tokens([
        AddedToken("[MASK]", lstrip=True, special=True),
        AddedToken("<rs>", rstrip=True, special=True),
    ])
    tokenizer.add_tokens([
        AddedToken("word", single_word=True, normalized=False),
        AddedToken("Hello", normalized=True),
        AddedToken(" sword", normalized=False),
    ])
    return tokenizer


def build(kind, tmp_path_factory):
    tokenizer, alphabet = KINDS[kind]()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=SPECIAL, initial_alphabet=alphabet, show_progress=False)
    tokenizer.train_from_iterator(TRAINING, trainer)
    tokenizer = with_added_tokens(tokenizer)
    bos = "<s>" if kind.startswith(("llama2", "metaspace")) else "<|begin_of_text|>"
    tokenizer.post_processor = processors.Sequence([
        *( [tokenizer.post_processor] if kind == "gpt2" else []),
        processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A $B", special_tokens=[(bos, tokenizer.token_to_id(bos))]),
    ])
    path = tmp_path_factory.mktemp(kind) / "tokenizer.json"
    tokenizer.save(str(path))
    return tokenizer, prefix_scorer.Tokenizer.from_file(path), bos


@pytest.fixture(scope="module", params=sorted(KINDS))
def pair(request, tmp_path_factory):
    return build(request.param, tmp_path_factory)


def lm_eval_pair(hf, context, continuation, add_special_tokens):
    """lm-evaluation-harness's HF-backend pair encoding, written with HF tokenizers."""
    spaces = len(context) - len(context.rstrip())
    if spaces:
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    whole = hf.encode(context + continuation, add_special_tokens=add_special_tokens).ids
    context_ids = hf.encode(context, add_special_tokens=add_special_tokens).ids
    return context_ids, whole[len(context_ids):]


def check_text(hf, native, bos, text):
    for special in (False, True):
        want = hf.encode(text, add_special_tokens=special).ids
        assert native.encode(text, special) == want, (text, special)
        for skip in (False, True):
            assert native.decode(want, skip_special_tokens=skip) == hf.decode(want, skip_special_tokens=skip), (text, skip)


def test_corpus_encodes_and_decodes_as_hf(pair):
    hf, native, bos = pair
    for text in CORPUS:
        check_text(hf, native, bos, text)


def test_pairs_encode_as_lm_eval_does(pair):
    hf, native, bos = pair
    for context in CORPUS[1:]:
        if context.startswith(bos) or not context.strip():
            continue
        for continuation in (" A", " Hello world.", "日本", "\n\nnext", " 42"):
            for special in (False, True):
                got = prefix_scorer._core.encode_pair(native, context, continuation, special)
                assert tuple(got) == tuple(lm_eval_pair(hf, context, continuation, special)), (context, continuation)


# Code point ranges random strings draw from: ASCII (often), whitespace, Latin with accents and combining marks,
# CJK, Thai, Arabic, Devanagari, emoji with modifiers and joiners, and anything else below U+10FFFF.
RANGES = [(0x20, 0x7E)] * 6 + [(0x09, 0x0D), (0x00A0, 0x017F), (0x0300, 0x036F), (0x4E00, 0x4FFF), (0x0E00, 0x0E7F),
                                  (0x0600, 0x06FF), (0x0900, 0x097F), (0x1F300, 0x1F6FF), (0x1F3FB, 0x1F3FF),
                                  (0x200B, 0x200D), (0x2000, 0x206F), (0x1, 0xD7FF), (0xE000, 0x10FFFF)]


def random_character(rng):
    """A character assigned in this Python's Unicode version: code points assigned later are classified by each
    library's own Unicode tables (utf8proc's and the Rust regex crate's differ in version)."""
    while True:
        lo, hi = rng.choice(RANGES)
        c = chr(rng.randint(lo, hi))
        if unicodedata.category(c) not in ("Cn", "Cs"):
            return c


def random_text(rng):
    chars = []
    for _ in range(rng.randint(0, 40)):
        chars.append(random_character(rng))
        if rng.random() < 0.15:
            chars.append(rng.choice([" ", "  ", "\n", "word", "Hello", "[MASK]", " <rs> ", "<s>", "'s", "123"]))
    return "".join(chars)


def check_random_strings(hf, native, seed, count):
    """`count` random strings from `seed`: encoded and decoded as HF does."""
    rng = random.Random(seed)
    for _ in range(count):
        text = random_text(rng)
        want = hf.encode(text, add_special_tokens=False).ids
        assert native.encode(text, False) == want, repr(text)
        assert native.decode(want) == hf.decode(want, skip_special_tokens=False), repr(text)


def test_random_strings_encode_as_hf(pair):
    hf, native, bos = pair
    check_random_strings(hf, native, seed=7, count=3000)


def test_invalid_utf8_is_a_clear_error(pair):
    _, native, _ = pair
    for raw in (b"\xff", b"abc\xc3", b"\xed\xa0\x80", b"\xc0\xaf"):
        with pytest.raises(ValueError, match="UTF-8"):
            native.encode(raw)


@pytest.mark.parametrize("component, spec, message", [
    ("model", {"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "a"}, "unsupported tokenizer model type 'WordPiece'"),
    ("model", {"type": "Unigram", "vocab": [["a", 0.0]]}, "unsupported tokenizer model type 'Unigram'"),
    ("pre_tokenizer", {"type": "Whitespace"}, "unsupported pre_tokenizer type 'Whitespace'"),
    ("pre_tokenizer", {"type": "BertPreTokenizer"}, "unsupported pre_tokenizer type 'BertPreTokenizer'"),
    ("normalizer", {"type": "BertNormalizer"}, "unsupported normalizer type 'BertNormalizer'"),
    ("decoder", {"type": "WordPiece"}, "unsupported decoder type 'WordPiece'"),
    ("post_processor", {"type": "BertProcessing", "sep": ["[SEP]", 1], "cls": ["[CLS]", 2]},
     "unsupported post_processor type 'BertProcessing'"),
])
def test_unsupported_components_name_themselves(tmp_path, component, spec, message):
    hf, _ = KINDS["llama3"]()
    hf.train_from_iterator(TRAINING[:11], trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    data = json.loads(hf.to_str())
    data[component] = spec
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        prefix_scorer.Tokenizer.from_file(path)


@pytest.mark.parametrize("scheme", ["first", "always", "never"])
def test_metaspace_decodes_every_short_token_sequence_as_hf(tmp_path, scheme):
    """Every sequence of up to three tokens made of markers and letters: HF tokenizers drops each marker of the
    first token under a prepend scheme ("▁▁" decodes to "", "b▁" to "b"), and turns the others into spaces."""
    import itertools

    vocab = {"<unk>": 0, "▁": 1, "▁▁": 2, "a": 3, "▁a": 4, "▁▁▁": 5, "b▁": 6, "a▁b": 7}
    hf = Tokenizer(models.BPE(vocab, [], unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=scheme)
    hf.decoder = decoders.Metaspace(replacement="▁", prepend_scheme=scheme)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    native = prefix_scorer.Tokenizer.from_file(path)
    sequences = [list(ids) for n in (1, 2, 3) for ids in itertools.product(range(1, 8), repeat=n)]
    assert [native.decode(ids) for ids in sequences] == [hf.decode(ids) for ids in sequences]
