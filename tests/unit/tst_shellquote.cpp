// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// shellQuote (core/util, the one copy: remote commands, the serving benchmark's and a push's undo script)
// is checked against a real /bin/sh: whatever the word, the shell must see it unchanged.
#include "core/util/shellquote.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

class TestShellQuote : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString shell(const QString &command, const QString &home) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"HOME"_s, home);
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(m_dir.path());
        p.start(u"/bin/sh"_s, {u"-c"_s, command});
        p.waitForFinished(10000);
        return QString::fromUtf8(p.readAllStandardOutput());
    }

private slots:
    void roundTrip_data() {
        QTest::addColumn<QString>("word");
        QTest::newRow("plain") << u"abc"_s;
        QTest::newRow("empty") << QString();
        QTest::newRow("spaces") << u"a b  c"_s;
        QTest::newRow("single quotes") << u"it's 'quoted'"_s;
        QTest::newRow("double quotes") << u"say \"hi\""_s;
        QTest::newRow("command substitution") << u"$(touch PWNED)"_s;
        QTest::newRow("backticks") << u"`touch PWNED`"_s;
        QTest::newRow("semicolon") << u"a; touch PWNED"_s;
        QTest::newRow("newline") << u"line1\ntouch PWNED"_s;
        QTest::newRow("variables") << u"$HOME ${IFS} $1 $@"_s;
        QTest::newRow("glob") << u"* ? [a-z]"_s;
        QTest::newRow("backslashes") << u"a\\b\\\\c\\'"_s;
        QTest::newRow("redirections and pipes") << u"> x < y | z & w"_s;
        QTest::newRow("leading dash") << u"-rf"_s;
        QTest::newRow("unicode") << u"Grüße 日本"_s;
        QTest::newRow("tilde") << u"~/x ~root"_s;
    }

    void roundTrip() {
        QFETCH(QString, word);
        QVERIFY(m_dir.isValid());
        for (const ShellQuoting how : {ShellQuoting::Always, ShellQuoting::WhenNeeded}) {
            QCOMPARE(shell(u"printf %s "_s + shellQuote(word, how), m_dir.path()), word);
            // several words keep their boundaries (printf's own options: none after the format)
            QCOMPARE(shell(u"printf '[%s]' "_s + shellJoin({word, u"x y"_s, word}, how), m_dir.path()),
                     u"["_s + word + u"][x y]["_s + word + u"]"_s);
            QVERIFY(!QFile::exists(m_dir.path() + u"/PWNED"_s));
        }
    }

    // What a person reads: plain words bare, anything else quoted exactly as Always quotes it.
    void whenNeeded_data() {
        QTest::addColumn<QString>("word");
        QTest::addColumn<QString>("shown");
        QTest::newRow("plain") << u"sglang.bench_serving"_s << u"sglang.bench_serving"_s;
        QTest::newRow("option") << u"--num-prompts=200"_s << u"--num-prompts=200"_s;
        QTest::newRow("url") << u"http://127.0.0.1:30000"_s << u"http://127.0.0.1:30000"_s;
        QTest::newRow("empty") << QString() << u"''"_s;
        QTest::newRow("space") << u"a b"_s << u"'a b'"_s;
        QTest::newRow("quote") << u"it's"_s << u"'it'\\''s'"_s;
        QTest::newRow("dollar") << u"$HOME"_s << u"'$HOME'"_s;
        QTest::newRow("backtick") << u"`id`"_s << u"'`id`'"_s;
        QTest::newRow("newline") << u"a\nb"_s << u"'a\nb'"_s;
        QTest::newRow("tilde") << u"~/x"_s << u"'~/x'"_s;
        QTest::newRow("glob") << u"*.json"_s << u"'*.json'"_s;
    }

    void whenNeeded() {
        QFETCH(QString, word);
        QFETCH(QString, shown);
        QCOMPARE(shellQuote(word, ShellQuoting::WhenNeeded), shown);
        if (shown != word)
            QCOMPARE(shellQuote(word, ShellQuoting::WhenNeeded), shellQuote(word));
        QCOMPARE(shellQuote(word), u"'"_s + QString(word).replace(u"'"_s, u"'\\''"_s) + u"'"_s);
    }

    void homePaths_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("expected"); // with HOME=/h o/me
        QTest::newRow("~") << u"~"_s << u"/h o/me"_s;
        QTest::newRow("~/file") << u"~/.cache/moetune/agent.pyz"_s << u"/h o/me/.cache/moetune/agent.pyz"_s;
        QTest::newRow("~/ hostile") << u"~/$(touch PWNED) 'x'"_s << u"/h o/me/$(touch PWNED) 'x'"_s;
        QTest::newRow("absolute") << u"/opt/a b"_s << u"/opt/a b"_s;
        QTest::newRow("~user is not expanded") << u"~root/x"_s << u"~root/x"_s;
    }

    void homePaths() {
        QFETCH(QString, path);
        QFETCH(QString, expected);
        QCOMPARE(shell(u"printf %s "_s + shellQuotePath(path), u"/h o/me"_s), expected);
        QVERIFY(!QFile::exists(m_dir.path() + u"/PWNED"_s));
    }
};

QTEST_GUILESS_MAIN(TestShellQuote)
#include "tst_shellquote.moc"
