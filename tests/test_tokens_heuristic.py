"""HeuristicCounter against exact o200k_base counts on real text: the error bounds we promise."""

# Non-Latin sample text is the point of these tests, so confusable-character warnings are noise.
# ruff: noqa: RUF001

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import FIXTURE_TRANSCRIPTS, TRANSCRIPTS, corpus, text_params
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwarden.tokens.base import TokenCounter
from contextwarden.tokens.exact import TiktokenCounter
from contextwarden.tokens.heuristic import (
    CL100K_WEIGHTS,
    O200K_WEIGHTS,
    HeuristicCounter,
    HeuristicWeights,
    TextFeatures,
    text_features,
)

KINDS = ("en", "zh", "ja", "code", "json", "mixed")

MAX_OVER = 0.15
MAX_UNDER = 0.03
"""The promise on the shared corpora: within +15% of the exact count and never more than 3%
under, per kind of text (the held-out kinds are reported in docs/tokens.md)."""
MAX_OVER_CL100K = 0.25
MAX_UNDER_CL100K = 0.06
"""The cl100k preset's bounds (v9, one set of class-pair weights: JSON 5.5 % under, English 24 %
over); over is the safe side for the window."""

# Hand-written (not calibration data): the same two sentences in scripts the corpora lack. They
# set the weights of the classes the corpora cannot fit, and guard against gross errors there.
OTHER_SCRIPTS = {
    "ru": "Контекстное окно модели ограничено, поэтому агент должен сжимать историю разговора, "
    "не теряя того, что сказал пользователь. Мы считаем токены заранее и оставляем запас.",
    "ko": "모델의 컨텍스트 창은 제한되어 있으므로 에이전트는 사용자가 말한 내용을 잃지 않으면서 "
    "대화 기록을 압축해야 합니다. 우리는 토큰을 미리 세고 여유를 남깁니다.",
    "de": "Das Kontextfenster des Modells ist begrenzt, deshalb muss der Agent den "
    "Gesprächsverlauf verdichten, ohne zu verlieren, was der Benutzer gesagt hat. "
    "Wir zählen die Token im Voraus.",
    "fr": "La fenêtre de contexte du modèle est limitée ; l'agent doit donc compresser "
    "l'historique de la conversation sans perdre ce que l'utilisateur a dit. "
    "Nous comptons les jetons à l'avance.",
    "ar": "نافذة السياق في النموذج محدودة، لذلك يجب على الوكيل ضغط سجل المحادثة "
    "دون أن يفقد ما قاله المستخدم. نحسب الرموز مسبقاً ونترك هامشاً حتى لا يتجاوز الطلب الحد أبداً.",
    "hi": "मॉडल की संदर्भ विंडो सीमित है, इसलिए एजेंट को उपयोगकर्ता की कही बातों को खोए बिना बातचीत "
    "के इतिहास को संक्षिप्त करना चाहिए। हम टोकन पहले से गिनते हैं।",
    "el": "Το παράθυρο περιβάλλοντος του μοντέλου είναι περιορισμένο, οπότε ο πράκτορας πρέπει να "
    "συμπιέζει το ιστορικό της συνομιλίας χωρίς να χάνει ό,τι είπε ο χρήστης.",
    "vi": "Cửa sổ ngữ cảnh của mô hình có giới hạn, vì vậy tác nhân phải nén lịch sử hội thoại mà "
    "không làm mất những gì người dùng đã nói.",
    "th": "หน้าต่างบริบทของโมเดลมีขนาดจำกัด ดังนั้นเอเจนต์จึงต้องบีบอัดประวัติการสนทนาโดยไม่สูญเสียสิ่งที่ผู้ใช้พูด",
    "he": "חלון ההקשר של המודל מוגבל, ולכן הסוכן חייב לדחוס את היסטוריית השיחה מבלי לאבד את "
    "מה שהמשתמש אמר. אנחנו סופרים את האסימונים מראש.",
    "hy": "Մոդելի համատեքստի պատուհանը սահմանափակ է, ուստի գործակալը պետք է սեղմի զրույցի "
    "պատմությունը՝ չկորցնելով այն, ինչ ասել է օգտատերը։",
    "ka": "მოდელის კონტექსტური ფანჯარა შეზღუდულია, ამიტომ აგენტმა უნდა შეკუმშოს საუბრის "
    "ისტორია ისე, რომ არ დაკარგოს ის, რაც მომხმარებელმა თქვა.",
    "km": "បង្អួចបរិបទរបស់ម៉ូដែលមានកំណត់ ដូច្នេះភ្នាក់ងារត្រូវតែបង្រួមប្រវត្តិនៃការសន្ទនាដោយមិនបាត់បង់អ្វីដែលអ្នកប្រើបាននិយាយ។",
    "my": "မော်ဒယ်၏ အကြောင်းအရာဝင်းဒိုးသည် အကန့်အသတ်ရှိသောကြောင့် အေးဂျင့်သည် "
    "အသုံးပြုသူပြောခဲ့သည်များကို မဆုံးရှုံးစေဘဲ စကားပြောမှတ်တမ်းကို ချုံ့ရမည်။",
    "am": "የሞዴሉ የአውድ መስኮት ውስን ነው፣ ስለዚህ ወኪሉ ተጠቃሚው የተናገረውን ሳያጣ የውይይቱን ታሪክ መጭመቅ አለበት።",
    "si": "ආකෘතියේ සන්දර්භ කවුළුව සීමිතය, එබැවින් පරිශීලකයා පැවසූ දේ නැති නොකර නියෝජිතයා සංවාද ඉතිහාසය සම්පීඩනය කළ යුතුය.",
    "te": "మోడల్ యొక్క సందర్భ విండో పరిమితంగా ఉంటుంది, కాబట్టి వినియోగదారు చెప్పినదాన్ని కోల్పోకుండా ఏజెంట్ సంభాషణ చరిత్రను కుదించాలి.",
    "emoji": "Done ✅ tests pass 🎉 deploy 🚀 next: fix 🐛 in parser ⚠️ careful 🔥🔥🔥 "
    "ok 👍 thanks 🙏",
}
OTHER_SCRIPTS_UNDER = 0.20
OTHER_SCRIPTS_OVER = 0.50
CL100K_OTHER_SCRIPTS_UNDER = 0.35
"""Looser bounds for the scripts above: their weights rest on a few sentences, not a corpus."""


@pytest.fixture(scope="module")
def o200k() -> TiktokenCounter:
    return TiktokenCounter("o200k_base")


@pytest.fixture(scope="module")
def cl100k() -> TiktokenCounter:
    return TiktokenCounter("cl100k_base")


def relative_error(estimate: int, exact: int) -> float:
    return estimate / exact - 1


@pytest.mark.parametrize("sample", text_params(*KINDS))
def test_heuristic_within_bounds_of_o200k(sample: Path, o200k: TiktokenCounter) -> None:
    text, kind = sample.read_text(encoding="utf-8"), sample.stem
    error = relative_error(HeuristicCounter().count_text(text), o200k.count_text(text))
    assert -MAX_UNDER <= error <= MAX_OVER, f"{kind}: {error:+.1%}"


@pytest.mark.parametrize("sample", text_params(*KINDS))
def test_cl100k_preset_within_bounds(sample: Path, cl100k: TiktokenCounter) -> None:
    text, kind = sample.read_text(encoding="utf-8"), sample.stem
    estimate = HeuristicCounter(CL100K_WEIGHTS).count_text(text)
    error = relative_error(estimate, cl100k.count_text(text))
    assert -MAX_UNDER_CL100K <= error <= MAX_OVER_CL100K, f"{kind}: {error:+.1%}"


@pytest.mark.parametrize("sample", text_params("zh", "ja", "json"))
def test_heuristic_beats_chars_over_four(sample: Path, o200k: TiktokenCounter) -> None:
    text = sample.read_text(encoding="utf-8")
    exact = o200k.count_text(text)
    ours = abs(relative_error(HeuristicCounter().count_text(text), exact))
    naive = abs(relative_error(len(text) // 4, exact))
    assert ours * 2 < naive


def claude_code_tool_results(paths: list[Path]) -> list[str]:
    found: list[str] = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            message = json.loads(line).get("message")
            if not isinstance(message, dict) or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content")
                    if isinstance(content, list):
                        content = "\n".join(p.get("text", "") for p in content)
                    if isinstance(content, str) and content:
                        found.append(content)
    return found


@pytest.mark.parametrize(
    ("paths", "at_least"),
    [
        pytest.param([p for p in FIXTURE_TRANSCRIPTS if p.parent.name == "claude-code"], 60),
        pytest.param([p for p in TRANSCRIPTS if p.parent.name == "claude-code"], 500, marks=corpus),
    ],
    ids=["fixtures", "corpus"],
)
def test_heuristic_on_real_tool_results(
    paths: list[Path], at_least: int, o200k: TiktokenCounter
) -> None:
    outputs = claude_code_tool_results(paths)
    assert len(outputs) > at_least
    heuristic = HeuristicCounter()
    estimate = sum(heuristic.count_text(o) for o in outputs)
    exact = sum(o200k.count_text(o) for o in outputs)
    error = relative_error(estimate, exact)
    assert -MAX_UNDER <= error <= MAX_OVER, f"{error:+.1%}"


SCRIPT_MISSES = {
    "o200k_base": {"am", "hy", "ka", "si"},
    "cl100k_base": {"am", "hy", "ru", "si"},
}
"""Scripts outside the bounds since v9 (strict xfails; docs/tokens.md): a class is a UTF-8 lead
byte, and these share theirs with a script that tokenizes differently (Amharic and Georgian with
Myanmar, Khmer and Vietnamese letters; Sinhala with the Indic scripts; Armenian with Hebrew and
Arabic; Cyrillic with Greek for cl100k). A Claude session in one of them is corrected by its
calibration after the first reply."""


def script_params(encoding: str) -> list[object]:
    strict = pytest.mark.xfail(strict=True, reason="shares its class: docs/tokens.md")
    return [
        pytest.param(name, marks=[strict] if name in SCRIPT_MISSES[encoding] else [])
        for name in sorted(OTHER_SCRIPTS)
    ]


@pytest.mark.parametrize("language", script_params("o200k_base"))
def test_other_scripts_roughly_right(language: str, o200k: TiktokenCounter) -> None:
    text = OTHER_SCRIPTS[language]
    error = relative_error(HeuristicCounter().count_text(text), o200k.count_text(text))
    assert -OTHER_SCRIPTS_UNDER <= error <= OTHER_SCRIPTS_OVER, f"{language}: {error:+.1%}"


@pytest.mark.parametrize("language", script_params("cl100k_base"))
def test_other_scripts_roughly_right_with_cl100k(language: str, cl100k: TiktokenCounter) -> None:
    """cl100k spends up to three tokens on a character of these scripts."""
    text = OTHER_SCRIPTS[language]
    estimate = HeuristicCounter(CL100K_WEIGHTS).count_text(text)
    error = relative_error(estimate, cl100k.count_text(text))
    assert -CL100K_OTHER_SCRIPTS_UNDER <= error <= OTHER_SCRIPTS_OVER, f"{language}: {error:+.1%}"


@pytest.mark.parametrize(
    "text",
    [
        "hello world",
        "Please fix the failing test.",
        "Run pytest -x and show me the output",
        "请帮我修复这个测试",
        "テストを直してください",
        '{"path": "src/app.py", "line": 42}',
    ],
)
def test_short_strings_are_close(text: str, o200k: TiktokenCounter) -> None:
    exact = o200k.count_text(text)
    estimate = HeuristicCounter().count_text(text)
    assert math.floor(exact * 0.8) - 1 <= estimate <= math.ceil(exact * 1.5) + 1


def test_empty_and_whitespace() -> None:
    counter = HeuristicCounter()
    assert counter.count_text("") == 0
    assert counter.count_text(" ") == 1
    assert counter.count_text("\n\n") >= 1


def test_counter_satisfies_protocol() -> None:
    assert isinstance(HeuristicCounter(), TokenCounter)


def test_weights_and_features_stay_in_step() -> None:
    rules = ("margin", "repeats")
    names = [f for f in HeuristicWeights.__dataclass_fields__ if f not in rules]
    assert names == list(TextFeatures._fields)
    assert len(O200K_WEIGHTS.vector()) == len(TextFeatures._fields)


def test_margin_scales_the_estimate() -> None:
    from dataclasses import replace

    text = "The quick brown fox jumps over the lazy dog. " * 50
    plain = HeuristicCounter(replace(O200K_WEIGHTS, margin=1.0)).count_text(text)
    raised = HeuristicCounter(replace(O200K_WEIGHTS, margin=1.2)).count_text(text)
    # Weights are rounded to bytes at a scale chosen per margin: proportional to within 3%.
    assert raised == pytest.approx(plain * 1.2, rel=0.03)


def test_features_classify_scripts() -> None:
    features = text_features(
        "getValue 123 x  y\n你好 かな 한국 é ─ 😀😀 ，Дом λ ạ ก क ש ع — parcoords ą\u0301\u0302"
    )
    assert features.letters == 19  # getValue, x, y, parcoords
    assert features.letter_runs == 11  # é, Дом, λ, ạ and ą join the letter runs
    assert features.uppercase == 1
    assert features.case_changes == 1
    assert (features.digits, features.digit_runs, features.spaced_digits) == (3, 1, 1)
    assert features.lower_pairs == 2 + 3 + 8  # get, alue, parcoords
    assert (features.alphabet, features.latin1, features.extended) == (6, 1, 1)
    assert (features.latin_ext, features.latin_ext_pairs) == (3, 2)  # ą and two marks on it
    assert (features.brahmic, features.cjk, features.hangul) == (2, 4, 3)  # fullwidth comma: hangul
    assert (features.space_pairs, features.newlines) == (1, 1)
    assert (features.symbols, features.astral, features.astral_pairs) == (2, 2, 1)


def test_punctuation_after_a_space_is_counted_apart() -> None:
    """`` "`` and `` (`` are a token each (the space joins the punctuation); ``("`` after a letter
    merges into its neighbours."""
    spaced = text_features('key: "value" (x) = y')
    assert spaced.spaced_punct == 3  # ' "', ' (', ' ='
    assert spaced.punct_pairs == 0
    attached = text_features('f("a")')
    assert (attached.spaced_punct, attached.punct_pairs) == (0, 2)  # (" and ")


def test_punctuation_before_a_digit_is_counted_apart() -> None:
    """``.5`` is two tokens (numbers take no prefix), ``.b`` often one (``.bar``)."""
    assert text_features('"3.18.5",').punct_digits == 3  # '"3', '.1', '.5'
    assert text_features("a.b, x-y").punct_digits == 0
    assert text_features("12:30:45 v1.2").punct_digits == 3
    counter = HeuristicCounter()
    assert counter.count_text("1.2.3.4.5.6.7.8") > counter.count_text("a.b.c.d.e.f.g.h")


COMMON_WORD_TEXTS = {
    "one word repeated": "the " * 1_000,
    "function words": "and of to in is it for on as at by " * 100,
    "English's commonest pair": "with the other thing that they think there is nothing " * 60,
    "a constructor": "".join(
        f"    this.{name} = {name};\n"
        for name in ("path", "width", "height", "depth", "length", "method", "theme") * 25
    ),
}
"""Text made of the commonest words and identifiers, a token each. A weight that discounts what
marks English (a negative weight on ``th``, tried and dropped: docs/tokens.md) would count it at
a tenth of its size. Without the word list (v9) they cost what any short word does: up to 1.4x,
the safe side."""


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("name", sorted(COMMON_WORD_TEXTS))
def test_common_words_are_not_undercounted(encoding: str, name: str) -> None:
    quicktok = pytest.importorskip("quicktok")
    text = COMMON_WORD_TEXTS[name]
    weights = O200K_WEIGHTS if encoding == "o200k_base" else CL100K_WEIGHTS
    ratio = HeuristicCounter(weights).count_text(text) / quicktok.get_encoding(encoding).count(text)
    assert 0.97 <= ratio <= 1.4, f"{name}: {ratio:.3f}"


def test_counter_sums_the_weights_of_the_features() -> None:
    """The counter adds weights per class pair without counting features; the sum must be the
    linear model over text_features (up to the weights' rounding to bytes)."""
    from contextwarden.tokens.features import text_features as features_of

    text = "Das Kontextfenster ist begrenzt: 12 Token, parcoords.line  {x: 1}\n\tДом 你好 ก ạ"
    for weights in (O200K_WEIGHTS, CL100K_WEIGHTS):
        linear = sum(w * x for w, x in zip(weights.vector(), features_of(text), strict=True))
        estimate = HeuristicCounter(weights).count_text(text)
        assert linear * 0.97 - 1 <= estimate <= linear * 1.03 + 1


def test_lone_surrogates_do_not_crash() -> None:
    assert HeuristicCounter().count_text("bad \ud800 data") >= 3


texts = st.text(
    alphabet=st.characters(codec="utf-8") | st.sampled_from("ab Z9.{}\n\t你か"),
    max_size=300,
)


@given(texts)
@settings(max_examples=300, deadline=None)
def test_never_negative_and_zero_only_when_empty(text: str) -> None:
    count = HeuristicCounter().count_text(text)
    assert count >= 0
    assert (count == 0) == (text == "")


@given(texts, texts)
@settings(max_examples=300, deadline=None)
def test_roughly_additive_under_concatenation(left: str, right: str) -> None:
    # Joining can merge one run across the seam and rounding adds at most one per part.
    counter = HeuristicCounter()
    joined = counter.count_text(left + right)
    parts = counter.count_text(left) + counter.count_text(right)
    assert parts - 4 <= joined <= parts + 2


@given(texts)
@settings(max_examples=200, deadline=None)
def test_repetition_scales_linearly(text: str) -> None:
    counter = HeuristicCounter()
    once = counter.count_text(text + "\n")
    assert counter.count_text((text + "\n") * 4) <= 4 * once
    assert counter.count_text((text + "\n") * 4) >= 4 * once - 8
