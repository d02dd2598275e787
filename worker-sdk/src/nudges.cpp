#include "nudges.hpp"

#include <cstdio>

#include "loopguard/utf8.hpp"

namespace loopguard::sdk {
namespace {

std::string n(std::uint32_t v) {
  return std::to_string(v);
}

std::string prefix(severity level) {
  switch (level) {
    case severity::warn:
      return "[Loopguard] ";
    case severity::critical:
      return "[Loopguard CRITICAL] ";
    case severity::terminate:
      return "[Loopguard STOP] ";
    case severity::none:
      break;
  }
  return "[Loopguard] ";
}

std::string ordinal(std::uint32_t v) {
  const std::uint32_t tens = v % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : v % 10 == 1              ? "st"
                       : v % 10 == 2              ? "nd"
                       : v % 10 == 3              ? "rd"
                                                  : "th";
  return n(v) + suffix;
}

std::string tail(severity level, const finding& f, std::uint32_t occurrence,
                 bool rejects_at_critical) {
  std::string t;
  if (occurrence >= 2 && level != severity::terminate) {
    t += " This is the " + ordinal(occurrence) + " time you have fallen back into this loop.";
  }
  if (level == severity::critical && f.rejectable && rejects_at_critical) {
    t += " Calls that repeat it will be refused until you do something different.";
  }
  if (level == severity::terminate) t += " The run is being stopped (LOOP_DETECTED).";
  return t;
}

// exact, structural, cycle, similar_args: judged on a call.
nudge_text call_body(const finding& f) {
  const std::string& tool = f.tool;
  switch (f.detector) {
    case detector_id::exact:
      if (f.detail == "cap") {
        return {"`" + tool + "` has now been called " + n(f.count) +
                    " times with the same arguments. Its output keeps changing, so this may be "
                    "polling, but the limit for one call is reached.",
                "Wait for the condition some other way, or report what you are waiting for."};
      }
      return {"You have called `" + tool + "` " + n(f.count) + " times with identical arguments" +
                  (f.results_known ? " and got the same outcome each time" : "") +
                  ". Repeating it will not produce anything new.",
              "Use a different tool or different arguments, explain what is blocking you, or "
              "say so if the task is already done."};
    case detector_id::structural:
      return {"You have called `" + tool + "` " + n(f.count) + " times on the same target (" +
                  f.detail + "), changing only optional flags" +
                  (f.results_known ? ", with the same outcome." : "."),
              "You already have this result; act on it instead of fetching it again."};
    case detector_id::cycle:
      return {"The same sequence of calls (" + f.detail + ") has now repeated " + n(f.count) +
                  " times in a row without any change in the results.",
              "Break the cycle: re-read the last error carefully, then try an approach you have "
              "not tried yet."};
    default:  // similar_args
      return {"You have tried `" + tool + "` " + n(f.count) +
                  " times with only slightly different arguments, and every attempt failed or "
                  "came back empty in the same way.",
              "Small variations of the same attempt will not help: question the assumption "
              "behind it, or look for the information another way."};
  }
}

// result, test_fix, bash_cascade, retrace: judged on a result.
nudge_text result_body(const finding& f) {
  const std::string& tool = f.tool;
  switch (f.detector) {
    case detector_id::retrace:
      return {n(f.count) + " recent results (most recently from `" + tool +
                  "`) showed exactly what other calls had already shown.",
              "You are going back over ground already covered: use what those results said, "
              "or look somewhere you have not looked yet."};
    case detector_id::result:
      // Attempts: the parallel calls of one turn are one (docs/detectors.md).
      return {"The last " + n(f.count) + " attempts (most recently `" + tool +
                  "`) all failed with the same error.",
              "Read that error and fix its cause before calling anything else."};
    case detector_id::test_fix:
      if (f.detail == "varied") {
        return {"The tests have now failed " + n(f.count) + " times in a row (last run: `" + tool +
                    "`). Each change moved the failure, none made them pass.",
                "Step back: re-read the task and the first failure, and check whether the "
                "approach itself is wrong before the next change."};
      }
      return {"The tests have now failed " + n(f.count) +
                  " times in a row the same way (last run: `" + tool +
                  "`). Iterating on the same fix is not converging.",
              "Step back: re-read the failure output, question your diagnosis, and try a "
              "different fix strategy."};
    default:  // bash_cascade
      if (f.detail == "file_ops") {
        return {n(f.count) +
                    " shell commands in a row have failed, and they were file "
                    "operations (cat, sed, echo > file, ...).",
                "Use the file tools (read_file, write_file, edit_file) instead of the shell for "
                "reading and writing files."};
      }
      if (f.detail == "varied") {
        return {n(f.count) + " shell commands in a row have failed (last: `" + tool + "`).",
                "Stop and diagnose the first failure before running more commands."};
      }
      return {
          n(f.count) + " shell commands in a row have failed the same way (last: `" + tool + "`).",
          "Stop and diagnose the first failure before running more commands."};
  }
}

// output_similarity, content, summary: judged on text.
nudge_text text_body(const finding& f) {
  switch (f.detector) {
    case detector_id::output_similarity:
      return {"Your reply is " + f.detail +
                  "% similar to one of your recent replies: you are repeating yourself.",
              "Say something new: take the next concrete step with a tool, or state what is "
              "blocking you."};
    case detector_id::content:
      return {"The text you are writing keeps repeating the same passage (\"" +
                  std::string(utf8::cut(f.detail, 40)) + "...\").",
              "Stop this reply and continue with a concrete action."};
    case detector_id::intent:
      return {"This reply keeps announcing what you will do instead of doing it (" + f.detail +
                  ": " + n(f.count) + " times).",
              "Stop describing the next step: make exactly one tool call that does it now."};
    default:  // summary
      return {"That is " + n(f.count) +
                  " replies in a row without a tool call: you are summarising instead of "
                  "working.",
              "Pick the next task and start on it with a tool now."};
  }
}

// judge: the caller's judge said the agent is stuck; its reason, its confidence, its cost.
nudge_text judge_body(const finding& f) {
  char p[16];
  std::snprintf(p, sizeof p, "%.2f", f.confidence);
  char cost[32];
  std::snprintf(cost, sizeof cost, "%.4g", f.cost);
  std::string m =
      "A review of your recent steps says you are probably stuck (p = " + std::string(p) + ")";
  m += f.detail.empty() ? "." : ": " + f.detail;
  if (!m.empty() && m.back() != '.') m += '.';
  m += " (check cost " + std::string(cost) + ")";
  return {m,
          "Stop repeating the current approach: state what you have tried and what you will "
          "do differently."};
}

nudge_text body(const finding& f) {
  switch (f.detector) {
    case detector_id::exact:
    case detector_id::structural:
    case detector_id::cycle:
    case detector_id::similar_args:
      return call_body(f);
    case detector_id::result:
    case detector_id::test_fix:
    case detector_id::bash_cascade:
    case detector_id::retrace:
      return result_body(f);
    case detector_id::output_similarity:
    case detector_id::content:
    case detector_id::summary:
    case detector_id::intent:
      return text_body(f);
    case detector_id::limit:
      return {"Safety limit: " + f.detail + ".", "Wrap up: report what is done and what remains."};
    case detector_id::judge:
      return judge_body(f);
    case detector_id::budget:
    case detector_id::handoff:
    case detector_id::global:
      break;  // never found here: loopguardd writes its text (on_swarm_verdict passes it on)
  }
  return {"", ""};
}

}  // namespace

nudge_text make_nudge(const finding& f, severity level, std::uint32_t occurrence,
                      bool rejects_at_critical) {
  nudge_text t = body(f);
  t.message = prefix(level) + t.message + " " + t.suggestion +
              tail(level, f, occurrence, rejects_at_critical);
  return t;
}

}  // namespace loopguard::sdk
