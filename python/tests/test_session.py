"""A Session keeps the KV cache between turns: a follow-up feeds only its
new tokens, and its reply is what a fresh run over the whole conversation
gives, whether turns come as ids, as text or as chat messages."""
import unittest

import mkrt

import fixture


class SessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = mkrt.load(fixture.compile_model("model.mk"), device="cpu")

    def test_a_second_turn_of_ids_equals_a_fresh_run_over_the_conversation(self):
        session = mkrt.Session(self.model)
        first = [0, 104, 101, 108, 108, 111]
        reply = session.generate(first, max_new_tokens=6)
        self.assertEqual(session.tokens, first + reply)
        second = [32, 119, 104, 111]
        answer = session.generate(second, max_new_tokens=8)
        # Fed: the first turn's last token (generated, never fed) and the new ones.
        self.assertEqual(self.model._context.last_fed, 1 + len(second))
        # (A fresh run takes the engine's cache over: checked after the turns.)
        self.assertEqual(reply, self.model.generate(first, max_new_tokens=6))
        self.assertEqual(answer, self.model.generate(first + reply + second, max_new_tokens=8))
        self.assertEqual(answer, fixture.mkrun_tokens(fixture.compile_model("model.mk"),
                                                      first + reply + second, 8))

    def test_a_second_chat_turn_equals_a_fresh_chat_over_the_messages(self):
        session = self.model.session()
        first = session.chat("hi there", max_new_tokens=5)
        answer = session.chat("and then?", max_new_tokens=5)
        fed = self.model._context.last_fed
        self.assertEqual(first, self.model.chat("hi there", max_new_tokens=5))
        messages = [{"role": "user", "content": "hi there"},
                    {"role": "assistant", "content": first},
                    {"role": "user", "content": "and then?"}]
        self.assertEqual(session.messages, messages + [{"role": "assistant", "content": answer}])
        self.assertEqual(answer, self.model.chat(messages, max_new_tokens=5))
        whole = self.model.encode(self.model.render_chat(messages), add_bos=False)
        # Only what the cache lacked was fed, never the whole conversation.
        self.assertLess(fed, len(whole) - 10)

    def test_streamed_turns_and_text_turns_keep_the_context_too(self):
        session = mkrt.Session(self.model)
        first = "".join(session.generate("The cat", 6, stream=True))
        context = list(session.tokens)
        answer = "".join(session.generate(" sat", 6, stream=True))
        fresh = self.model.generate(context + self.model.encode(" sat", add_bos=False), 6)
        if fresh and fresh[-1] in self.model.eos_tokens:
            fresh = fresh[:-1]
        self.assertEqual(answer, self.model.decode(fresh))
        self.assertEqual(first, self.model.generate("The cat", 6))

    def test_sessions_sharing_the_engine_do_not_mix_their_caches(self):
        a, b = mkrt.Session(self.model), mkrt.Session(self.model)
        a1 = a.generate([0, 65, 66], 4)
        b.generate([0, 120, 121, 122], 4)
        self.model.generate([5, 6, 7], 3)
        a2 = a.generate([67, 68], 4)
        self.assertEqual(a2, self.model.generate([0, 65, 66] + a1 + [67, 68], 4))

    def test_a_turn_past_the_context_is_refused_and_not_kept(self):
        session = mkrt.Session(self.model)
        session.generate([0, 1 + 64], 4)
        kept = list(session.tokens)
        with self.assertRaisesRegex(mkrt.ContextFullError, "pass the max context of 96"):
            session.generate([70] * 80, 20)
        self.assertEqual(session.tokens, kept)
        session.reset()
        self.assertEqual(session.tokens, [])


if __name__ == "__main__":
    unittest.main()
