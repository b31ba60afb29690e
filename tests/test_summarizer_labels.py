"""A line or a section its author labels as the cause found or the choice made is a decision in
every language the sessions use: a bold lead or a line's first words before a colon (the
full-width one of Chinese and Japanese, French's spaced one), the qualifier on either side of
the noun ("Causa raiz:", "根本原因"), and a heading that names a cause or a conclusion
("## Причина", "## 结论")."""

from __future__ import annotations

import pytest

from contextwarden.model import Message, ThinkingBlock
from contextwarden.summarizers.asides import aside_decisions
from contextwarden.summarizers.decisions import decisions, labelled, standing


@pytest.mark.parametrize(
    "line",
    [
        "**Причина:** конфиг читается после того, как сервер уже открыл порт",
        "**Решение:** читать конфиг в main до запуска сервера",
        "Causa raiz: o arquivo de configuração é lido depois que o servidor abriu a porta",
        "**Solução:** ler a configuração em main antes de abrir a porta",
        "- **Solución propuesta:** leer la configuración antes de abrir el puerto",
        "Cause : la configuration est lue après l'ouverture du port par le serveur",
        "**Ursache:** die Konfiguration wird erst nach dem Öffnen des Ports gelesen",
        "根本原因\uff1a服务器打开端口之后才读取配置文件",
        "**対応方針**: 設定ファイルをサーバー起動前に読み込む",
        "**원인:** 서버가 포트를 연 뒤에야 설정 파일을 읽는다",
    ],
)
def test_a_line_labelled_in_the_sessions_languages_is_a_choice(line: str) -> None:
    assert labelled(line)
    assert decisions(f"Reading the server now.\n{line}") == [line]
    assert standing(line) == 2


@pytest.mark.parametrize(
    ("heading", "line"),
    [
        ("## Причина", "конфиг читается после открытия порта сервером"),
        ("### Conclusão", "o servidor lê a configuração tarde demais"),
        ("## 结论", "服务器打开端口之后才读取配置文件\uff0c顺序错了"),
        ("**Warum es scheitert**", "der Server liest die Konfiguration zu spät"),
    ],
)
def test_the_lines_under_a_heading_naming_a_cause_are_decisions(heading: str, line: str) -> None:
    assert decisions(f"{heading}\n\n{line}") == [line]


def test_a_labelled_line_of_the_reasoning_is_kept_in_any_language() -> None:
    thinking = "Сначала посмотрю на main.\n**Причина:** конфиг читается после открытия порта"
    message = Message("assistant", (ThinkingBlock(thinking, "sig"),))
    assert aside_decisions(message) == ["**Причина:** конфиг читается после открытия порта"]


@pytest.mark.parametrize(
    "line",
    [
        # a word after an English label is no qualifier: the noun is what follows
        "Issue number: 5, opened yesterday by the maintainers of the project",
        # a word that only holds a label's letters
        "Causalidade: a correlação entre as duas séries é fraca neste período",
    ],
)
def test_a_line_that_only_starts_like_a_label_is_none(line: str) -> None:
    assert not labelled(line)
