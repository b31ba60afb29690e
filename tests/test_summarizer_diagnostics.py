"""An editor's diagnostics a tool reports (Cursor's ``read_lints``): an error-severity one says
the code does not build, and its message is the line kept; warnings are advice, and a file
that holds such JSON is a file's contents, never a failure."""

from __future__ import annotations

from contextwarden.model import ToolResultBlock, ToolUseBlock
from contextwarden.summarizers.diagnostics import error_diagnostics
from contextwarden.summarizers.failures import failure_lines, result_failure

# Trimmed from Cursor's read_lints step in Bucur21/PaperBites's SpecStory history (MIT, commit
# 7a7c53c): the export shows the call's parameters, then its reply, each as fenced JSON.
READ_LINTS = """Parameters:

```json
{
  "paths": [
    "d:\\\\PaperBites\\\\apps\\\\web\\\\app\\\\papers\\\\[slug]\\\\page.tsx"
  ]
}
```
Result:

```json
{
  "linterErrorsByFile": [
    {
      "errors": [
        {
          "message": "Cannot find module './paper-actions' or its corresponding type declarations.",
          "range": {
            "endPosition": {"column": 47, "line": 5},
            "startPosition": {"column": 30, "line": 5}
          },
          "severity": "DIAGNOSTIC_SEVERITY_ERROR",
          "source": "ts"
        },
        {
          "message": "'x' is declared but its value is never read.",
          "severity": "DIAGNOSTIC_SEVERITY_WARNING",
          "source": "ts"
        },
        {
          "message": "Property 'slug' does not exist on type '{}'.",
          "severity": "DIAGNOSTIC_SEVERITY_ERROR",
          "source": "ts"
        }
      ],
      "relativeWorkspacePath": "d:\\\\PaperBites\\\\apps\\\\web\\\\page.tsx"
    }
  ]
}
```
Status: **completed**"""
MISSING = "Cannot find module './paper-actions' or its corresponding type declarations."
NO_SLUG = "Property 'slug' does not exist on type '{}'."
LINTS = ToolUseBlock("call_1", "read_lints", {"summary": "Tool use: **read_lints**"})


def test_the_error_diagnostics_are_read_in_order_warnings_left_out() -> None:
    assert error_diagnostics(READ_LINTS) == [MISSING, NO_SLUG]


def test_an_error_diagnostic_is_a_failure_of_the_call_its_message_the_excerpt() -> None:
    result = ToolResultBlock("call_1", READ_LINTS)
    assert result_failure(LINTS, result) == MISSING
    assert failure_lines(LINTS, result, 3) == (MISSING, NO_SLUG)


def test_warnings_only_or_no_problems_is_no_failure() -> None:
    warnings = READ_LINTS.replace("SEVERITY_ERROR", "SEVERITY_WARNING")
    assert error_diagnostics(warnings) == []
    assert result_failure(LINTS, ToolResultBlock("call_1", warnings)) is None
    assert result_failure(LINTS, ToolResultBlock("call_1", "No linter errors found.")) is None


def test_a_file_holding_such_json_is_its_contents_not_a_failure() -> None:
    read = ToolUseBlock("call_2", "Read", {"file_path": "fixtures/lints.json"})
    assert result_failure(read, ToolResultBlock("call_2", READ_LINTS)) is None
