SELECT * FROM bookshop.main.genre_sales ORDER BY genre;
