"""python -m mkrt: generate from a prompt, or chat on stdin.

  python -m mkrt generate MODEL.mk "PROMPT" [-n N] [--device auto|cpu|gpu] [--stop S]...
                  [--temperature T] [--top-k K] [--top-p P] [--min-p M]
                  [--repetition-penalty R] [--seed S]
  python -m mkrt chat MODEL.mk [the same options]   (a turn per stdin line)
"""
import argparse
import sys

from . import load
from .errors import ContextFullError, MkrtError


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m mkrt",
                                     description="Runs a .mk file compiled by mkc.")
    commands = parser.add_subparsers(dest="command", required=True)
    generate = commands.add_parser("generate", help="continue a prompt, printed as it comes")
    generate.add_argument("model", help="the .mk file")
    generate.add_argument("prompt", help="the text to continue")
    chat = commands.add_parser("chat", help="a conversation, one user turn per stdin line, "
                                            "the KV cache kept between turns")
    chat.add_argument("model", help="the .mk file")
    for command in (generate, chat):
        command.add_argument("-n", "--max-new-tokens", type=int,
                             default=64 if command is generate else 256,
                             help="the most tokens to generate (per turn)")
        command.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
        command.add_argument("--stop", action="append", default=[],
                             help="a string that ends the generation (repeatable)")
        command.add_argument("--temperature", type=float,
                             help="sample (in the kernel) at this temperature; 0: greedy")
        command.add_argument("--top-k", type=int, help="sample among the k most likely")
        command.add_argument("--top-p", type=float,
                             help="sample among the fewest reaching this probability")
        command.add_argument("--min-p", type=float,
                             help="drop tokens less likely than this times the most likely")
        command.add_argument("--repetition-penalty", type=float,
                             help="penalize the context's tokens (HF's rule; 1: off)")
        command.add_argument("--seed", type=int, help="the sampling seed (default: random)")
    return parser.parse_args(argv)


def _print_stream(pieces):
    for piece in pieces:
        sys.stdout.write(piece)
        sys.stdout.flush()
    sys.stdout.write("\n")
    sys.stdout.flush()


def main(argv=None):
    args = _arguments(argv)
    sampling = {"temperature": args.temperature, "top_k": args.top_k, "top_p": args.top_p,
                "min_p": args.min_p, "repetition_penalty": args.repetition_penalty,
                "seed": args.seed}
    try:
        model = load(args.model, device=args.device)
        if args.command == "generate":
            _print_stream(model.stream(args.prompt, args.max_new_tokens, stop=args.stop,
                                       **sampling))
            return 0
        session = model.session()
        interactive = sys.stdin.isatty()
        while True:
            if interactive:
                sys.stdout.write("> ")
                sys.stdout.flush()
            line = sys.stdin.readline()
            if not line:
                return 0
            line = line.rstrip("\n")
            if not line.strip():
                continue
            try:
                _print_stream(session.chat(line, args.max_new_tokens, stop=args.stop,
                                           stream=True, **sampling))
            except ContextFullError as error:
                # The turn was not kept: the conversation may go on shorter.
                print(f"mkrt: error: {error}", file=sys.stderr)
    except (MkrtError, FileNotFoundError) as error:
        print(f"mkrt: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
