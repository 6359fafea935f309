"""Port of siddhi-map-xml's ``StreamingXMLSourceMapperTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/map/xml/sourcemapper/
StreamingXMLSourceMapperTestCase.java`` of siddhi-io/siddhi-map-xml: the xml mapper with
``enable.streaming.xml.content='true'``.  The first test publishes a whole document to an
``inMemory`` topic; the others read upstream's ``files/test.xml`` (copied here as
:data:`TEST_XML`, written to the test's temporary directory) with a ``file`` source in
``line`` mode, so the mapper gets the document one trimmed line at a time.  Upstream sleeps
five seconds and counts events; the port waits for the rows and checks that no more come.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.mappers.harness import publish, until

#: component/src/test/resources/files/test.xml, as upstream has it (tab-indented).
TEST_XML = """<?xml version='1.0' encoding='UTF-8'?>
<root>
\t<bounds minlat="53.4281" minlon="-2.4142" maxlat="54.0097" maxlon="-0.9762"/>
\t<child id="413229" timestamp="2014-09-10T14:12:48Z"/>
\t<child id="414427" timestamp="2018-01-24T23:16:10Z"/>
\t<child id="673959" timestamp="2019-10-20T12:07:13Z">
\t\t<extra id="1234" timestamp="2014-09-11T10:36:37Z"/>
\t\t<detail key="company" value="wso2"/>
\t\t<extra id="0987" timestamp="2014-09-11T10:36:37Z"/>
\t\t<detail key="country" value="Sri Lanka"/>
\t</child>
\t<child id="1649133314" timestamp="2019-03-11T17:16:47Z">
\t\t<extra id="5678" timestamp="2014-09-11T10:36:37Z"/>
\t\t<detail key="company" value="ibm"/>
\t\t<detail key="country" value="USA"/>
\t\t<detail key="employees" value="500"/>
\t</child>
\t<way id="3698064" timestamp="2017-12-30T23:25:01Z" >
\t\t<detail key="company" value="ibm"/>
\t\t<detail key="country" value="USA"/>
\t\t<subDetail ref="2143797720"/>
\t\t<subDetail ref="2143797722"/>
\t</way>
\t<node id="1234567890" timestamp="2014-09-11T10:36:37Z" />
\t<way id="204702407" version="3" timestamp="2017-12-31T00:30:25Z">
\t\t<detail key="company" value="ibm"/>
\t\t<detail key="country" value="USA"/>
\t\t<subDetail ref="2143797720"/>
\t\t<subDetail ref="2143797722"/>
\t</way>
</root>
"""


def _rows(got: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return [row for chunk in got for row in chunk]


def _test_xml(tmp_path: Path) -> Path:
    files = tmp_path / "files"
    files.mkdir(exist_ok=True)
    path = files / "test.xml"
    path.write_text(TEST_XML, encoding="utf-8")
    return files


async def test_testXmlInputMappingForMultipleEventsWithNestedXMLStructure(run: Any) -> None:
    """A whole document in one message: each /root/node is an event (leaf-node data), <p> is not."""
    name = "XmlStreamingNested"
    r = await run(f"@App:name('{name}')"
                  f"@source(type='inMemory', topic='{name}', "
                  "@map(type='xml',"
                  "enclosing.element=\"/root/node\","
                  "fail.on.missing.attribute=\"false\","
                  "enable.streaming.xml.content=\"true\","
                  "extract.leaf.node.data=\"true\","
                  "@attributes(att1 = \"/node/@att1\", value1 = \"/node/value1\", value2 = \"/node/value2\")))\n"
                  "define stream FooStream (att1 string, value1 string, value2 string); "
                  "define stream BarStream (att1 string, value1 string, value2 string); "
                  "from FooStream select * insert into BarStream; ")
    got = r.watch("BarStream")
    await publish(name, "<root>\n"
                        '    <node att1="att1value">\n'
                        "        <value1>some-value1</value1>\n"
                        "        <value2>some-value2</value2>\n"
                        "    </node>\n"
                        "    <node>\n"
                        "        <value1>some-value3</value1>\n"
                        "        <value2>some-value4</value2>\n"
                        "    </node>\n"
                        "    <p>some-value-p</p>\n"
                        "</root>")
    await until(lambda: len(_rows(got)) >= 2)
    await asyncio.sleep(0.2)
    assert _rows(got) == [("att1value", "some-value1", "some-value2"), (None, "some-value3", "some-value4")]
    assert r.mapping_errors("FooStream") == 0


async def test_testXmlInputMappingForMultipleEventsWithNestedXMLStructure2(run: Any, tmp_path: Path) -> None:
    """test.xml line by line, enclosing.element='/root/child' as event, leaf-node data: 10 events
    (one per <child> without children, one per child node of the others)."""
    files = _test_xml(tmp_path)
    r = await run("@App:name('XmlStreamingFile2')"
                  "@source(\n"
                  "    type = 'file', \n"
                  f"    file.uri = \"file:/{files}/test.xml\", \n"
                  "    mode = \"line\", \n"
                  "    tailing = \"false\", \n"
                  "    action.after.process='keep',\n"
                  "    @map(type='xml', \n"
                  "        enclosing.element=\"/root/child\",\n"
                  "        enable.streaming.xml.content=\"true\","
                  "        enclosing.element.as.event=\"true\","
                  "        extract.leaf.node.data=\"true\","
                  "        fail.on.missing.attribute=\"false\",\n"
                  "        @attributes(id = \"/child/@id\", timestamp = \"/child/@timestamp\",  "
                  "                    key = \"/child/detail/@key\", "
                  "                    value = \"/child/detail/@value\")))\n"
                  "define stream FooStream (id string, timestamp string, key string, value string);\n"
                  "define stream OutputStream (id string, timestamp string, key string, value string);\n"
                  "from FooStream\n"
                  "insert into OutputStream;")
    got = r.watch("OutputStream")
    await until(lambda: len(_rows(got)) >= 10)
    await asyncio.sleep(0.3)
    rows = _rows(got)
    assert len(rows) == 10
    # Upstream asserts the first four; the rest follow from the file.
    assert rows == [
        ("413229", "2014-09-10T14:12:48Z", None, None),
        ("414427", "2018-01-24T23:16:10Z", None, None),
        ("673959", "2019-10-20T12:07:13Z", None, None),
        ("673959", "2019-10-20T12:07:13Z", "company", "wso2"),
        ("673959", "2019-10-20T12:07:13Z", None, None),
        ("673959", "2019-10-20T12:07:13Z", "country", "Sri Lanka"),
        ("1649133314", "2019-03-11T17:16:47Z", None, None),
        ("1649133314", "2019-03-11T17:16:47Z", "company", "ibm"),
        ("1649133314", "2019-03-11T17:16:47Z", "country", "USA"),
        ("1649133314", "2019-03-11T17:16:47Z", "employees", "500"),
    ]
    assert r.mapping_errors("FooStream") == 0


async def test_testXmlInputMappingForMultipleEventsWithNestedXMLStructure3(run: Any, tmp_path: Path) -> None:
    """test.xml line by line, enclosing.element='/root/child/extra': the three <extra>s."""
    files = _test_xml(tmp_path)
    r = await run("@App:name('XmlStreamingFile3')"
                  "@source(\n"
                  "    type = 'file', \n"
                  f"    file.uri = \"file:/{files}/test.xml\", \n"
                  "    mode = \"line\", \n"
                  "    tailing = \"false\", \n"
                  "    action.after.process='keep',\n"
                  "    @map(type='xml', \n"
                  "        enclosing.element=\"/root/child/extra\",\n"
                  "        enable.streaming.xml.content=\"true\","
                  "        extract.leaf.node.data=\"true\","
                  "        fail.on.missing.attribute=\"false\",\n"
                  "        @attributes(id = \"/extra/@id\", timestamp = \"/extra/@timestamp\")))\n"
                  "define stream FooStream (id string, timestamp string);\n"
                  "define stream OutputStream (id string, timestamp string);\n"
                  "from FooStream\n"
                  "insert into OutputStream;")
    got = r.watch("OutputStream")
    await until(lambda: len(_rows(got)) >= 3)
    await asyncio.sleep(0.3)
    assert _rows(got) == [("1234", "2014-09-11T10:36:37Z"), ("0987", "2014-09-11T10:36:37Z"),
                          ("5678", "2014-09-11T10:36:37Z")]
    assert r.mapping_errors("FooStream") == 0
