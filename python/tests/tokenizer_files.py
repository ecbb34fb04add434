#!/usr/bin/env python3
"""Writes tokenizer files for the 256-token test fixtures into DIR, as an HF
checkpoint has them: a byte-level BPE tokenizer.json without merges (<s>,
</s> and <|im_end|> as ids 0-2, then one token per byte 0x03-0xff, so that
text round-trips and a character of several bytes spans several tokens),
tokenizer_config.json (BOS and EOS by name, a chat template) and
generation_config.json (the EOS ids, sampling defaults).

  tokenizer_files.py DIR
"""
import json
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from tokenizers.pre_tokenizers import ByteLevel

SPECIALS = ["<s>", "</s>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")


def main(directory):
    os.makedirs(directory, exist_ok=True)
    alphabet = ByteLevel.alphabet()  # the 256 characters standing for bytes
    # ByteLevel maps byte b to one character; order them by byte.
    by_byte = sorted(alphabet, key=lambda c: _byte_of(c))
    vocab = {token: i for i, token in enumerate(SPECIALS)}
    for character in by_byte[len(SPECIALS):]:
        vocab[character] = len(vocab)
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(SPECIALS)
    tokenizer.save(os.path.join(directory, "tokenizer.json"))
    files = {
        "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>",
                                  "chat_template": CHAT_TEMPLATE},
        "generation_config.json": {"bos_token_id": 0, "eos_token_id": [1, 2],
                                   "do_sample": True, "temperature": 0.7, "top_p": 0.9},
    }
    for name, content in files.items():
        with open(os.path.join(directory, name), "w") as f:
            json.dump(content, f, indent=1)


# GPT-2's byte-to-character table: printable bytes stand for themselves, the
# rest for 256 + their rank.
def _byte_of(character):
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
                 list(range(ord("®"), ord("ÿ") + 1)))
    code = ord(character)
    if code in printable:
        return code
    others = [b for b in range(256) if b not in printable]
    return others[code - 256]


if __name__ == "__main__":
    main(sys.argv[1])
