-- pandoc filter for the man pages: section headings in capitals, as
-- man(7) and whatis parsers expect (NAME, SYNOPSIS, ...).
function Header(h)
  if h.level == 1 then
    return pandoc.walk_block(h, {
      Str = function(s) return pandoc.Str(s.text:upper()) end
    })
  end
end
